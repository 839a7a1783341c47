import EarshotContract
import EarshotDBus

private typealias SessionKeys = SessionContract.Manager.Keys

/// The session state asked for with `SetDesiredState` (org.earshot.Session1); strings take
/// the contract's spellings, in any case.
public struct DesiredSessionState: Sendable {
    public var category: String
    public var options: [String] = []
    public var mode: String?
    public var active: Bool?
    public var sampleRate: Double?
    public var ioBufferDuration: Double?
    public var preferredInput: String?
    public var dataSourceName: String?
    public var polarPattern: String?
    public var inputOrientation: String?

    public init(category: String, options: [String] = [], mode: String? = nil, active: Bool? = nil,
                sampleRate: Double? = nil, ioBufferDuration: Double? = nil, preferredInput: String? = nil,
                dataSourceName: String? = nil, polarPattern: String? = nil, inputOrientation: String? = nil) {
        self.category = category
        self.options = options
        self.mode = mode
        self.active = active
        self.sampleRate = sampleRate
        self.ioBufferDuration = ioBufferDuration
        self.preferredInput = preferredInput
        self.dataSourceName = dataSourceName
        self.polarPattern = polarPattern
        self.inputOrientation = inputOrientation
    }

    var values: [String: DBusValue] {
        var values: [String: DBusValue] = [SessionKeys.category.name: .string(category)]
        if !options.isEmpty { values[SessionKeys.options] = .strings(options) }
        values[SessionKeys.mode] = mode.map(DBusValue.string)
        values[SessionKeys.active] = active.map(DBusValue.boolean)
        values[SessionKeys.sampleRate] = sampleRate.map(DBusValue.double)
        values[SessionKeys.ioBufferDuration] = ioBufferDuration.map(DBusValue.double)
        values[SessionKeys.preferredInput] = preferredInput.map(DBusValue.string)
        values[SessionKeys.dataSourceName] = dataSourceName.map(DBusValue.string)
        values[SessionKeys.polarPattern] = polarPattern.map(DBusValue.string)
        values[SessionKeys.inputOrientation] = inputOrientation.map(DBusValue.string)
        return values
    }
}

/// The session state in force, as `GetState` gives it.
public struct SessionState: Sendable, Equatable {
    public let category: String
    public let mode: String
    public let options: [String]
    public let active: Bool
    /// The device's actual rate (Hz) and buffer duration (s).
    public let sampleRate: Double
    public let ioBufferDuration: Double
    public let channels: UInt32
    /// The route's input and output device names (empty when none).
    public let input: String
    public let output: String
    /// Every field, by the contract's names.
    public let values: [String: DBusValue]

    init(_ values: [String: DBusValue]) {
        // GetState's fields are the manager's properties of the same names.
        typealias Fields = SessionContract.Manager
        let route = values[Fields.route]?.stringKeyedValue ?? [:]
        category = values[Fields.category]?.stringValue ?? ""
        mode = values[Fields.mode]?.stringValue ?? ""
        options = values[Fields.options]?.arrayValue?.compactMap(\.stringValue) ?? []
        active = values[Fields.active]?.boolValue ?? false
        sampleRate = values[Fields.sampleRate]?.doubleValue ?? 0
        ioBufferDuration = values[Fields.ioBufferDuration]?.doubleValue ?? 0
        channels = values[Fields.channels]?.uint32Value ?? 0
        input = route[SessionContract.Manager.RouteKeys.input]?.stringValue ?? ""
        output = route[SessionContract.Manager.RouteKeys.output]?.stringValue ?? ""
        self.values = values
    }
}

/// A capture device the session can route, as `ListInputs` gives it.
public struct SessionInput: Sendable, Equatable {
    public let name: String
    public let description: String
    /// Every field (Channels, SampleRates, DataSources, PolarPatterns, …), by the contract's names.
    public let values: [String: DBusValue]

    init(_ values: [String: DBusValue]) {
        name = values[SessionContract.Manager.InputKeys.name.name]?.stringValue ?? ""
        description = values[SessionContract.Manager.InputKeys.description.name]?.stringValue ?? ""
        self.values = values
    }
}

/// A claim on audio made with `Activate`; `deactivate()` gives it up.
public struct SessionActivation: Sendable {
    public let path: ObjectPath
    let calls: ServiceCalls

    public func deactivate() async throws {
        _ = try await calls.call(path, SessionContract.Activation.interface, SessionContract.Activation.deactivate)
    }
}

/// `org.earshot.Session1`.
public struct SessionProxy: Sendable {
    typealias Manager = SessionContract.Manager
    private(set) var calls: ServiceCalls
    let path = ObjectPath(declared: SessionContract.managerPath)

    public init(connection: DBusConnection, timeout: Duration = DBusConnection.defaultTimeout) {
        calls = ServiceCalls(connection: connection, busName: SessionContract.busName, timeout: timeout)
    }

    /// The same proxy with calls that give up after `timeout`.
    public func timing(out timeout: Duration) -> SessionProxy {
        var proxy = self
        proxy.calls.timeout = timeout
        return proxy
    }

    /// The same proxy with calls that never have the bus start the session service: while it
    /// is not on the bus they fail (`NameHasNoOwner`) instead (a service that left is started
    /// again by its unit, not by a call).
    public func withoutStartingService() -> SessionProxy {
        var proxy = self
        proxy.calls.startsService = false
        return proxy
    }

    /// Whether the session service is on the bus now.
    public func isPresent() async -> Bool {
        ((try? await calls.connection.nameOwner(SessionContract.busName)) ?? nil) != nil
    }

    /// Whether the session service is on the bus now, or the bus starts it on the first
    /// call (an activatable name, as on a head unit's system bus).
    public func isAvailable() async -> Bool {
        if await isPresent() { return true }
        return (try? await calls.connection.isActivatable(SessionContract.busName)) ?? false
    }

    /// Applies `state` in the contract's order; the first failure is thrown.
    public func setDesiredState(_ state: DesiredSessionState) async throws {
        let values = state.values
        try RequestCheck.check(values, against: Manager.desiredKeys)
        _ = try await calls.call(path, Manager.interface, Manager.setDesiredState, [.vardict(values)])
    }

    /// The state in force.
    public func state() async throws -> SessionState {
        let reply = try await calls.call(path, Manager.interface, Manager.getState)
        guard let values = reply.first?.stringKeyedValue else {
            throw EarshotError(name: DBusError.prefix + "Failed", message: "\(SessionContract.Manager.getState.name) replied \(reply)")
        }
        return SessionState(values)
    }

    /// The capture devices, with their channels, rates, data sources and polar patterns.
    public func inputs() async throws -> [SessionInput] {
        let reply = try await calls.call(path, Manager.interface, Manager.listInputs)
        guard let inputs = reply.first?.arrayValue?.compactMap(\.stringKeyedValue) else {
            throw EarshotError(name: DBusError.prefix + "Failed", message: "\(Manager.listInputs.name) replied \(reply)")
        }
        return inputs.map(SessionInput.init)
    }

    /// Claims audio for the caller (`Activate`).
    public func activate(category: String, options: [String] = [], mode: String? = nil, audioStream: String? = nil) async throws -> SessionActivation {
        let values = Self.activationValues(category: category, options: options, mode: mode, audioStream: audioStream)
        try RequestCheck.check(values, against: Manager.activationKeys)
        let activation = try await calls.object(path, Manager.interface, Manager.activate, [.vardict(values)])
        return SessionActivation(path: activation, calls: calls)
    }

    /// `Activate`'s request.
    static func activationValues(category: String, options: [String], mode: String?, audioStream: String?) -> [String: DBusValue] {
        var values: [String: DBusValue] = [SessionKeys.category.name: .string(category), SessionKeys.options.name: .strings(options)]
        values[SessionKeys.mode] = mode.map(DBusValue.string)
        values[SessionKeys.audioStream] = audioStream.map(DBusValue.string)
        return values
    }

    /// The activation at `path` (one this connection made earlier).
    public func activation(at path: ObjectPath) -> SessionActivation { SessionActivation(path: path, calls: calls) }
}
