import EarshotDBus

/// What the other services ask of the audio session service (`org.earshot.Session1`),
/// when it is on the bus: the state in force, and activations (claims on audio). Every
/// call is short and tolerant: without the session service, `state()` is nil and
/// `activate` returns nil, and the caller carries on with its own defaults.
public struct SessionClient: Sendable {
    public static let busName = "org.earshot.Session1"
    public static let managerPath: ObjectPath = "/org/earshot/Session1"
    public static let activationInterface = "org.earshot.Session1.Activation"

    /// The route's input, its channel count and buffer duration, as `GetState` gives them.
    public struct Input: Sendable, Equatable {
        public let device: String
        public let channels: UInt32
        public let ioBufferDuration: Double
        public let sampleRate: Double
    }

    public let connection: DBusConnection
    public let timeout: Duration

    public init(connection: DBusConnection, timeout: Duration = .seconds(2)) {
        self.connection = connection
        self.timeout = timeout
    }

    /// Whether the session service is on the bus now.
    public func isPresent() async -> Bool {
        ((try? await connection.nameOwner(Self.busName)) ?? nil) != nil
    }

    /// `GetState()`, or nil when the service is absent or does not answer in time.
    public func state() async -> [String: DBusValue]? {
        guard await isPresent() else { return nil }
        let reply = try? await connection.call(destination: Self.busName, path: Self.managerPath, interface: Self.busName,
                                               member: "GetState", [], timeout: timeout)
        return reply?.first?.stringKeyedValue
    }

    /// The input in force, or nil when the session names none (or is absent).
    public func input() async -> Input? {
        guard let state = await state(),
              let device = state["Route"]?.stringKeyedValue?["Input"]?.stringValue, !device.isEmpty,
              let channels = state["Channels"]?.uint32Value, channels > 0 else { return nil }
        return Input(device: device, channels: channels,
                     ioBufferDuration: state["IOBufferDuration"]?.doubleValue ?? 0,
                     sampleRate: state["SampleRate"]?.doubleValue ?? 0)
    }

    /// `Activate({Category, Options})`: the activation's path, nil when the service is
    /// absent; a refusal throws.
    public func activate(category: String, options: [String] = []) async throws -> ObjectPath? {
        guard await isPresent() else { return nil }
        let reply = try await connection.call(destination: Self.busName, path: Self.managerPath, interface: Self.busName,
                                              member: "Activate",
                                              [.vardict(["Category": .string(category), "Options": .strings(options)])],
                                              timeout: timeout)
        return reply.first?.objectPathValue
    }

    /// Ends an activation; errors (it has ended already, the service has gone) are ignored.
    public func deactivate(_ path: ObjectPath) async {
        _ = try? await connection.call(destination: Self.busName, path: path, interface: Self.activationInterface,
                                       member: "Deactivate", [], timeout: timeout)
    }
}
