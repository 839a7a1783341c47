import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// The session's interfaces and the keys of its requests, as the contract declares them.
typealias Session = SessionContract.Manager
typealias SessionKeys = SessionContract.Manager.Keys
typealias Activation = SessionContract.Activation

/// A private bus, an ALSA configuration with a mono and a two-channel file-backed
/// microphone, and the real earshot-session keeping its state in the bus directory.
struct SessionFixture {
    static let busName = SessionContract.busName
    static let path: ObjectPath = "/org/earshot/Session1"
    static let interface = Session.interface.name
    static let activationInterface = Activation.interface.name

    let bus: PrivateBus
    let service: ServiceProcess
    let client: DBusConnection

    static func with<T>(arguments: [String] = [], environment extra: [String: String] = [:],
                        _ body: (SessionFixture) async throws -> T) async throws -> T {
        try await ServiceSession.with("earshot-session", arguments: ["--linger-seconds", "2"] + arguments,
                                      busName: busName, prepare: { bus in
            try Data(microphonePattern).write(to: microphoneInput(of: bus))
            try devices(of: bus, extra: []).write()
            return environment(of: bus).merging(extra) { _, new in new }
        }) { session in
            try await body(SessionFixture(bus: session.bus, service: session.service, client: session.client))
        }
    }

    /// The test devices, and `XDG_STATE_HOME` in the bus directory (so the state file is
    /// `earshot/session.json` there).
    static func environment(of bus: PrivateBus) -> [String: String] {
        devices(of: bus, extra: []).environment.merging(["XDG_STATE_HOME": bus.directory.path]) { _, new in new }
    }

    static func stateFileURL(of bus: PrivateBus) -> URL { bus.directory.appendingPathComponent("earshot/session.json") }
    /// What the microphones play: a ramp that never repeats within 64 KiB, 256 KiB long.
    static let microphonePattern: [UInt8] = (0..<262_144).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }

    static func microphoneInput(of bus: PrivateBus) -> URL { bus.directory.appendingPathComponent("microphone.raw") }

    /// `mono_mic` (1 channel), `stereo_mic` (2 channels), and the microphones in `extra`.
    static func devices(of bus: PrivateBus, extra: [(String, Int)]) -> ALSATestDevices {
        var devices = ALSATestDevices(configPath: bus.directory.appendingPathComponent("asound.conf"))
        for (name, channels) in [("mono_mic", 1), ("stereo_mic", 2)] + extra {
            devices.microphone(name, infile: microphoneInput(of: bus), channels: channels)
        }
        return devices
    }

    var stateFile: URL { Self.stateFileURL(of: bus) }

    /// Rewrites the ALSA configuration with `extra` microphones besides the two, and
    /// `exclusive` ones that one user at a time may open (others get -EBUSY, as hardware),
    /// of which those in `rates` accept only that sample rate.
    func rewriteDevices(extra: [(String, Int)], exclusive: [String] = [], rates: [String: Int] = [:]) throws {
        var devices = Self.devices(of: bus, extra: extra)
        for name in exclusive {
            try devices.exclusiveMicrophone(name, infile: Self.microphoneInput(of: bus),
                                            library: try ServiceProcess.plugin("libEarshotUnpluggablePCM.so"),
                                            rate: rates[name])
        }
        try devices.write()
    }

    /// The session through EarshotClient, on the fixture's connection or `connection`.
    var proxy: SessionProxy { SessionProxy(connection: client) }
    func proxy(on connection: DBusConnection) -> SessionProxy { SessionProxy(connection: connection) }

    func setDesiredState(_ desired: DesiredSessionState, on connection: DBusConnection? = nil) async throws {
        try await proxy(on: connection ?? client).setDesiredState(desired)
    }

    /// `SetDesiredState` with a request the client refuses to send (wrong types, unknown
    /// keys, values out of range): what the service says to it.
    func setDesiredState(raw request: [String: DBusValue]) async throws {
        _ = try await client.call(destination: Self.busName, path: Self.path, interface: Self.interface,
                                  member: Session.setDesiredState.name, [.vardict(request)])
    }

    func state() async throws -> SessionState { try await proxy.state() }

    func inputs() async throws -> [SessionInput] { try await proxy.inputs() }

    func activate(_ category: String, options: [String] = [], mode: String? = nil, audioStream: String? = nil,
                  on connection: DBusConnection) async throws -> SessionActivation {
        try await proxy(on: connection).activate(category: category, options: options, mode: mode, audioStream: audioStream)
    }

    /// `Activate` with a request the client refuses to send.
    func activate(raw request: [String: DBusValue]) async throws {
        _ = try await client.call(destination: Self.busName, path: Self.path, interface: Self.interface,
                                  member: Session.activate.name, [.vardict(request)])
    }

    /// Gives up `activation` from `connection` (which may not be the one that made it).
    func deactivate(_ activation: SessionActivation, on connection: DBusConnection) async throws {
        try await proxy(on: connection).activation(at: activation.path).deactivate()
    }

    /// Subscribes `connection` to the manager's `signal`.
    func subscribe(_ signal: SignalDeclaration, on connection: DBusConnection? = nil) async throws -> SignalSubscription {
        try await (connection ?? client).subscribe(MatchRule(sender: Self.busName, interface: Self.interface, member: signal.name))
    }
}

extension [String: DBusValue] {
    /// A declared property's string, e.g. in `GetState`'s reply.
    func string(_ property: PropertyDeclaration) -> String? { self[property.name]?.stringValue }
}
