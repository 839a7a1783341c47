import Logging

/// An object exported on a connection: its interfaces and the current value of each
/// property. Setting a property emits `PropertiesChanged` only when the value changes.
public final class ExportedObject: Sendable {
    public let path: ObjectPath
    public let connection: DBusConnection
    private let declared: Locked<[DBusInterface]>
    private let values: Locked<[String: [String: DBusValue]]>

    init(path: ObjectPath, interfaces: [DBusInterface], initial: [String: [String: DBusValue]],
         connection: DBusConnection) throws(DBusError) {
        var seen = Set<String>()
        var table: [String: [String: DBusValue]] = [:]
        for interface in interfaces {
            try interface.validate()
            guard seen.insert(interface.name).inserted else {
                throw .invalidArgs("\(path): interface \(interface.name) given twice")
            }
            var properties: [String: DBusValue] = [:]
            for property in interface.properties where property.reader == nil {
                let value = initial[interface.name]?[property.name] ?? property.type.zeroValue
                guard let value else {
                    throw .invalidArgs("\(interface.name).\(property.name) needs an initial value")
                }
                guard value.type == property.type else {
                    throw .invalidArgs("\(interface.name).\(property.name) is \(property.type), initial value is \(value.type)")
                }
                properties[property.name] = value
            }
            for name in initial[interface.name]?.keys ?? [:].keys {
                guard let property = interface.property(name) else { throw .invalidArgs("\(interface.name) has no property \(name)") }
                guard property.reader == nil else { throw .invalidArgs("\(interface.name).\(name) is read live: it takes no value") }
            }
            table[interface.name] = properties
        }
        for name in initial.keys where !seen.contains(name) {
            throw .invalidArgs("\(path) has no interface \(name)")
        }
        self.path = path
        self.declared = Locked(interfaces)
        self.connection = connection
        self.values = Locked(table)
    }

    /// The object's interfaces as declared (inert once it has been unexported).
    public var interfaces: [DBusInterface] { declared.withLock { $0 } }

    public func interface(_ name: String) -> DBusInterface? { interfaces.first { $0.name == name } }

    /// Drops the method handlers and property setters (see `DBusInterface.detached`).
    func detach() {
        declared.withLock { $0 = $0.map { $0.detached() } }
    }

    /// The interface declaring property `name` (in `interface`, or in any when nil).
    private func resolve(_ interface: String?, property name: String) throws(DBusError) -> (DBusInterface, DBusProperty) {
        for candidate in interfaces where interface == nil || candidate.name == interface {
            if let property = candidate.property(name) { return (candidate, property) }
        }
        throw .unknownProperty("\(path) has no property \(interface.map { $0 + "." } ?? "")\(name)")
    }

    /// The current value of a property.
    public func property(_ name: String, interface: String? = nil) -> DBusValue? {
        guard let (declaring, declared) = try? resolve(interface, property: name) else { return nil }
        if let reader = declared.reader { return reader() }
        return values.withLock { $0[declaring.name]?[name] }
    }

    /// Sets one property; emits `PropertiesChanged` if the value changed.
    public func set(_ name: String, _ value: DBusValue, interface: String? = nil) throws(DBusError) {
        let (declaring, declared) = try resolve(interface, property: name)
        guard value.type == declared.type else {
            throw .invalidArgs("\(declaring.name).\(name) is \(declared.type), not \(value.type)")
        }
        guard declared.reader == nil else { throw .invalidArgs("\(declaring.name).\(name) is read live: it cannot be set") }
        try values.withLock { table throws(DBusError) in
            guard table[declaring.name]?[name] != value else { return }
            table[declaring.name]?[name] = value
            switch declared.emitsChangedSignal {
            case .true:
                try connection.emitSignal(path: path, interface: DBusInterface.properties, member: "PropertiesChanged",
                                          [.string(declaring.name), .vardict([name: value]), .strings([])])
            case .invalidates:
                try connection.emitSignal(path: path, interface: DBusInterface.properties, member: "PropertiesChanged",
                                          [.string(declaring.name), .vardict([:]), .strings([name])])
            case .const, .false:
                break
            }
        }
    }

    /// Sets several properties of one interface; emits one `PropertiesChanged` holding those
    /// whose value changed (none if nothing changed).
    public func setProperties(_ updates: [String: DBusValue], interface name: String) throws(DBusError) {
        guard let interface = interface(name) else { throw .unknownInterface("\(path) has no interface \(name)") }
        for (property, value) in updates {
            guard let declared = interface.property(property) else {
                throw .unknownProperty("\(name) has no property \(property)")
            }
            guard value.type == declared.type else {
                throw .invalidArgs("\(name).\(property) is \(declared.type), not \(value.type)")
            }
            guard declared.reader == nil else { throw .invalidArgs("\(name).\(property) is read live: it cannot be set") }
        }
        try values.withLock { table throws(DBusError) in
            var changed: [String: DBusValue] = [:]
            var invalidated: [String] = []
            for (property, value) in updates where table[name]?[property] != value {
                table[name]?[property] = value
                switch interface.property(property)?.emitsChangedSignal {
                case .true?: changed[property] = value
                case .invalidates?: invalidated.append(property)
                default: break
                }
            }
            guard !changed.isEmpty || !invalidated.isEmpty else { return }
            // Emitted under the lock so that signals leave in the order values changed.
            try connection.emitSignal(path: path, interface: DBusInterface.properties, member: "PropertiesChanged",
                                      [.string(name), .vardict(changed), .strings(invalidated.sorted())])
        }
    }

    /// All readable properties of an interface, as for `GetAll`.
    func readableProperties(of interface: DBusInterface) -> [String: DBusValue] {
        let current = values.withLock { $0[interface.name] ?? [:] }
        var result: [String: DBusValue] = [:]
        for property in interface.properties where property.access.readable {
            result[property.name] = property.reader?() ?? current[property.name]
        }
        return result
    }

    /// Emits a declared signal from this object: broadcast, or unicast to `destination`.
    public func emit(_ signal: String, _ arguments: [DBusValue] = [], interface: String? = nil,
                     to destination: String? = nil) throws(DBusError) {
        let (declaring, declared) = try resolve(interface, signal: signal)
        guard arguments.count == declared.arguments.count,
              zip(arguments, declared.arguments).allSatisfy({ $0.type == $1.type }) else {
            throw .invalidArgs("\(declaring.name).\(signal) has signature '\(declared.signature)', given '\(signatureString(arguments.map(\.type)))'")
        }
        try connection.emitSignal(path: path, interface: declaring.name, member: signal, arguments,
                                  destination: destination)
    }

    /// A declared signal of this object prepared for many sends (see `PreparedSignal`):
    /// broadcast, or unicast to `destination`.
    public func prepare(_ signal: String, interface: String? = nil, to destination: String? = nil) throws(DBusError) -> PreparedSignal {
        let (declaring, declared) = try resolve(interface, signal: signal)
        return try PreparedSignal(connection: connection, path: path, interface: declaring.name, member: signal,
                                  signature: declared.arguments.map(\.type), destination: destination)
    }

    /// The interface declaring signal `name` (in `interface`, or in any when nil).
    private func resolve(_ interface: String?, signal name: String) throws(DBusError) -> (DBusInterface, DBusSignal) {
        for candidate in interfaces where interface == nil || candidate.name == interface {
            if let signal = candidate.signal(name) { return (candidate, signal) }
        }
        throw .invalidArgs("\(path) declares no signal \(interface.map { $0 + "." } ?? "")\(name)")
    }

    // MARK: Properties interface

    func getProperty(interface name: String, property: String) throws(DBusError) -> DBusValue {
        let (declaring, declared) = try resolve(name.isEmpty ? nil : checkedInterface(name), property: property)
        guard declared.access.readable else { throw .accessDenied("\(declaring.name).\(property) is write-only") }
        if let reader = declared.reader { return reader() }
        guard let value = values.withLock({ $0[declaring.name]?[property] }) else {
            throw .unknownProperty("\(declaring.name).\(property) has no value")
        }
        return value
    }

    func setProperty(interface name: String, property: String, value: DBusValue, call: MethodCall, logger: Logger) async throws {
        let (declaring, declared) = try resolve(name.isEmpty ? nil : checkedInterface(name), property: property)
        guard declared.access.writable, let setter = declared.setter else {
            throw DBusError.propertyReadOnly("\(declaring.name).\(property) is read-only")
        }
        guard value.type == declared.type else {
            throw DBusError.invalidArgs("\(declaring.name).\(property) is \(declared.type), got \(value.type)")
        }
        let stored: DBusValue
        do {
            stored = try await setter(value, call)
        } catch {
            // The setter may refuse only as the property declares.
            throw UndeclaredErrors.checked(DBusConnection.errorReply(for: error), setting: declared, logger: logger)
        }
        try setProperties([property: stored], interface: declaring.name)
    }

    private func checkedInterface(_ name: String) throws(DBusError) -> String {
        guard interface(name) != nil || DBusInterface.standardNames.contains(name) else {
            throw .unknownInterface("\(path) has no interface \(name)")
        }
        return name
    }
}

/// Exported objects by path.
struct ObjectTable {
    var objects: [ObjectPath: ExportedObject] = [:]

    /// Names of the direct children of `path` that lead to exported objects.
    func children(of path: ObjectPath) -> [String] {
        let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
        var names = Set<String>()
        for key in objects.keys where key.rawValue.hasPrefix(prefix) && key != path {
            let rest = key.rawValue.dropFirst(prefix.count)
            if let element = rest.split(separator: "/", maxSplits: 1).first { names.insert(String(element)) }
        }
        return names.sorted()
    }
}
