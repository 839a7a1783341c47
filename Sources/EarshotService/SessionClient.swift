import EarshotClient
import EarshotContract
import EarshotDBus

/// What the other services ask of the audio session service, when it is on the bus: the
/// state in force, and activations (claims on audio), through `EarshotClient`'s session
/// proxy. Every call is short and tolerant: without the session service, `state()` is nil
/// and `activate` returns nil, and the caller carries on with its own defaults.
public struct SessionClient: Sendable {
    public static let busName = SessionContract.busName

    /// The route's input, its channel count and buffer duration, as `GetState` gives them.
    public struct Input: Sendable, Equatable {
        public let device: String
        public let channels: UInt32
        public let ioBufferDuration: Double
        public let sampleRate: Double
    }

    public let connection: DBusConnection
    private let session: SessionProxy
    private let startingService: Bool

    /// `startingService` false: the session service is asked only while it is on the bus,
    /// never started by the bus for a call.
    public init(connection: DBusConnection, timeout: Duration = .seconds(2), startingService: Bool = true) {
        self.connection = connection
        let proxy = SessionProxy(connection: connection, timeout: timeout)
        session = startingService ? proxy : proxy.withoutStartingService()
        self.startingService = startingService
    }

    /// Whether the session service is on the bus now, or (when this client may start it) is
    /// started by the bus on the first call (activatable): a head unit's services start one
    /// another on demand.
    public func isPresent() async -> Bool { startingService ? await session.isAvailable() : await session.isPresent() }

    /// The state in force, or nil when the service is absent or does not answer in time.
    public func state() async -> SessionState? {
        guard await isPresent() else { return nil }
        return try? await session.state()
    }

    /// The input in force, or nil when the session names none (or is absent).
    public func input() async -> Input? {
        guard let state = await state(), !state.input.isEmpty, state.channels > 0 else { return nil }
        return Input(device: state.input, channels: state.channels, ioBufferDuration: state.ioBufferDuration,
                     sampleRate: state.sampleRate)
    }

    /// Claims audio: the activation's path, nil when the service is absent; a refusal throws.
    public func activate(category: String, options: [String] = []) async throws -> ObjectPath? {
        guard await isPresent() else { return nil }
        return try await session.activate(category: category, options: options).path
    }

    /// Ends an activation; errors (it has ended already, the service has gone) are ignored.
    public func deactivate(_ path: ObjectPath) async {
        try? await session.activation(at: path).deactivate()
    }
}
