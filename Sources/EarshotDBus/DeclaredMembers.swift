/// Setting properties and emitting signals by their declarations, so that a member's name
/// is spelled only where its interface is declared.
extension ExportedObject {
    /// The interface of this object that declares `property` (by name and type).
    private func declaring(_ property: PropertyDeclaration) throws(DBusError) -> String {
        guard let interface = interfaces.first(where: { $0.property(property.name)?.signature == property.signature }) else {
            throw .unknownProperty("\(path) has no property \(property.name) of type \(property.signature)")
        }
        return interface.name
    }

    /// Sets one declared property; emits `PropertiesChanged` as it declares, if the value changed.
    public func set(_ property: PropertyDeclaration, _ value: DBusValue) throws(DBusError) {
        try set(property.name, value, interface: try declaring(property))
    }

    /// Sets declared properties of one interface; one `PropertiesChanged` holds those that changed.
    public func set(_ updates: [(PropertyDeclaration, DBusValue)]) throws(DBusError) {
        guard let first = updates.first else { return }
        let interface = try declaring(first.0)
        var values: [String: DBusValue] = [:]
        for (property, value) in updates {
            guard try declaring(property) == interface else {
                throw .invalidArgs("\(property.name) is not in \(interface): set each interface's properties apart")
            }
            values[property.name] = value
        }
        try setProperties(values, interface: interface)
    }

    /// Emits a declared signal: broadcast, or unicast to `destination`.
    public func emit(_ signal: SignalDeclaration, _ arguments: [DBusValue] = [], to destination: String? = nil) throws(DBusError) {
        try emit(signal.name, arguments, interface: try declaring(signal), to: destination)
    }

    /// A declared signal prepared for many sends (see `PreparedSignal`).
    public func prepare(_ signal: SignalDeclaration, to destination: String? = nil) throws(DBusError) -> PreparedSignal {
        try prepare(signal.name, interface: try declaring(signal), to: destination)
    }

    private func declaring(_ signal: SignalDeclaration) throws(DBusError) -> String {
        let signature = signal.arguments.map(\.signature).joined()
        guard let interface = interfaces.first(where: { $0.signal(signal.name)?.signature == signature }) else {
            throw .invalidArgs("\(path) declares no signal \(signal.name)(\(signature))")
        }
        return interface.name
    }
}

extension DBusConnection {
    /// Exports an object at `path` with `interfaces`, its declared properties starting at
    /// `values` (others at their type's zero value).
    @discardableResult
    public func export(_ path: ObjectPath, interfaces: [DBusInterface],
                       values: [(PropertyDeclaration, DBusValue)]) throws(DBusError) -> ExportedObject {
        var table: [String: [String: DBusValue]] = [:]
        for (property, value) in values {
            guard let interface = interfaces.first(where: { $0.property(property.name)?.signature == property.signature }) else {
                throw .unknownProperty("\(path): no interface given declares \(property.name)")
            }
            table[interface.name, default: [:]][property.name] = value
        }
        return try export(path, interfaces: interfaces, properties: table)
    }
}

extension Dictionary where Key == String {
    /// A declared property's entry, e.g. in what `GetAll` returned.
    public subscript(_ property: PropertyDeclaration) -> Value? {
        get { self[property.name] }
        set { self[property.name] = newValue }
    }

    /// A declared request key's entry, e.g. in a request being built.
    public subscript(_ key: OptionKey) -> Value? {
        get { self[key.name] }
        set { self[key.name] = newValue }
    }
}
