import ContractCore
import EarshotContract
import EarshotDBus

/// A property of one kind of Earshot object, typed: `Object` is the client type that reads it
/// (`AlertsProxy`, `AlertControl`, …) and `Value` what it reads as.
///
///     let waiting = try await earshot.alerts.read(.queueLength)          // UInt32
///     for await current in try await earshot.alerts.observe(.current) { … }
///     try await earshot.session.write(.duckLevel, 0.2)
///
/// Every property the contract declares has one (`ObjectPropertyTests` holds the lists to
/// the declarations), named as the declaration is.
public struct ObjectProperty<Object, Value: Sendable>: Sendable {
    public let interface: InterfaceDeclaration
    public let declaration: PropertyDeclaration
    let decode: @Sendable (DBusValue) -> Value?
    let encode: (@Sendable (Value) -> DBusValue)?

    init(_ interface: InterfaceDeclaration, _ declaration: PropertyDeclaration, decode: @escaping @Sendable (DBusValue) -> Value?,
         encode: (@Sendable (Value) -> DBusValue)? = nil) {
        self.interface = interface
        self.declaration = declaration
        self.decode = decode
        self.encode = encode
    }

    /// The value as read, or a `Failed` error naming the property when it is not of its type.
    func value(of raw: DBusValue) throws(EarshotError) -> Value {
        guard let value = decode(raw) else {
            throw EarshotError(name: DBusError.prefix + "Failed",
                               message: "\(declaration.name): \(raw) is not \(declaration.signature)")
        }
        return value
    }
}

/// A property of `Object` whatever its value's type: what an object's list of its
/// properties holds. Made only from an `ObjectProperty` of the same `Object`, so a property
/// typed for another object cannot be listed as this one's.
struct ListedProperty<Object>: Sendable {
    let interface: InterfaceDeclaration
    let declaration: PropertyDeclaration
    let writable: Bool

    init<Value>(_ property: ObjectProperty<Object, Value>) {
        interface = property.interface
        declaration = property.declaration
        writable = property.encode != nil
    }
}

/// The decoders of the property types the contract uses.
enum PropertyDecoding {
    static func string(_ value: DBusValue) -> String? { value.stringValue }
    static func uint32(_ value: DBusValue) -> UInt32? { value.uint32Value }
    static func uint64(_ value: DBusValue) -> UInt64? { value.uint64Value }
    static func double(_ value: DBusValue) -> Double? { value.doubleValue }
    static func boolean(_ value: DBusValue) -> Bool? { value.boolValue }
    static func strings(_ value: DBusValue) -> [String]? {
        value.arrayValue.flatMap { array in
            let strings = array.compactMap(\.stringValue)
            return strings.count == array.count ? strings : nil
        }
    }
    /// An object path, nil when it is `/` (none).
    static func object(_ value: DBusValue) -> ObjectPath?? {
        value.objectPathValue.map { $0 == .root ? nil : $0 }
    }
    static func dictionary(_ value: DBusValue) -> [String: DBusValue]? { value.stringKeyedValue }
    static func dictionaries(_ value: DBusValue) -> [[String: DBusValue]]? {
        value.arrayValue.flatMap { array in
            let entries = array.compactMap(\.stringKeyedValue)
            return entries.count == array.count ? entries : nil
        }
    }
}

/// One of Earshot's objects as a client type stands for it (a service's manager, a
/// pass-thru, an alert, an activation, a job): its typed properties are read, observed and
/// written through it.
public protocol EarshotObject: Sendable {
    /// Where its properties are.
    var propertyAccess: PropertyAccess { get }
}

extension EarshotObject {
    /// A property's value now.
    public func read<Value>(_ property: ObjectProperty<Self, Value>) async throws -> Value {
        try await propertyAccess.read(property)
    }

    /// A property's value now and after every change (nil while the service is not on the bus).
    /// `startingService`: the first value is read by a call even when the service is not on
    /// the bus, which starts it when it is activatable (as any call to it would).
    public func observe<Value>(_ property: ObjectProperty<Self, Value>, startingService: Bool = false) async throws -> AsyncStream<Value?> {
        try await propertyAccess.observe(property, startingService: startingService)
    }

    /// Sets a writable property (a read-only one is refused with `PropertyReadOnly`).
    public func write<Value>(_ property: ObjectProperty<Self, Value>, _ value: Value) async throws {
        try await propertyAccess.write(property, value)
    }

    /// Every property at once, as of one moment (one `GetAll`), each typed when asked for:
    /// what a view of the object reads, instead of a call per property.
    public func readAll() async throws -> PropertyValues<Self> {
        try await propertyAccess.readAll()
    }
}

/// An object's properties as `readAll()` read them.
public struct PropertyValues<Object>: Sendable {
    let values: [String: DBusValue]

    /// The property's value, nil when the reply had none of its name or not of its type.
    public subscript<Value>(_ property: ObjectProperty<Object, Value>) -> Value? {
        values[property.declaration.name].flatMap(property.decode)
    }
}

/// Reading, observing and writing typed properties of one object.
public struct PropertyAccess: Sendable {
    let calls: ServiceCalls
    let path: ObjectPath
    /// The interface that holds the object's properties.
    let interface: InterfaceDeclaration

    func read<Object, Value>(_ property: ObjectProperty<Object, Value>) async throws(EarshotError) -> Value {
        try property.value(of: try await calls.property(path, property.interface, property.declaration))
    }

    func readAll<Object>() async throws(EarshotError) -> PropertyValues<Object> {
        PropertyValues(values: try await calls.properties(path, interface))
    }

    /// Its value now (read when the service is on the bus) and after every change; nil while
    /// the service is not on the bus. Until the sequence is dropped or the connection closes.
    func observe<Object, Value>(_ property: ObjectProperty<Object, Value>, startingService: Bool = false) async throws(EarshotError) -> AsyncStream<Value?> {
        let (values, continuation) = AsyncStream<Value?>.makeStream()
        let following = try await calls.follow(path, property.interface, property.declaration, startingService: startingService) { value in
            continuation.yield(value.flatMap(property.decode))
        }
        continuation.onTermination = { _ in following.cancel() }
        return values
    }

    func write<Object, Value>(_ property: ObjectProperty<Object, Value>, _ value: Value) async throws(EarshotError) {
        guard let encode = property.encode else {
            throw EarshotError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(property.declaration.name) is read-only")
        }
        try await calls.setProperty(path, property.interface, property.declaration, encode(value))
    }
}

extension PropertyDecoding {
    /// A result code, nil while there is none yet (the empty string).
    static func resultCode(_ value: DBusValue) -> ResultCode?? {
        guard let text = value.stringValue else { return nil }
        if text.isEmpty { return .some(nil) }
        return ResultCode(rawValue: text).map { .some($0) }
    }

    /// The orchestrator's `Services`: each service's owner and whether it runs.
    static func services(_ value: DBusValue) -> [String: ServiceHealth]? {
        guard case .dictionary(_, _, let entries) = value else { return nil }
        var services: [String: ServiceHealth] = [:]
        for entry in entries {
            guard let name = entry.key.stringValue, case .structure(let fields) = entry.value, fields.count == 2,
                  let owner = fields[0].stringValue, let running = fields[1].boolValue else { return nil }
            services[name] = ServiceHealth(owner: owner, running: running)
        }
        return services
    }
}

/// One service as the orchestrator sees it: its owner on the bus (empty when none) and
/// whether it runs.
public struct ServiceHealth: Sendable, Equatable {
    public let owner: String
    public let running: Bool
}
