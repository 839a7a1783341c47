import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// A private bus with some of the Earshot services, as a head unit would run them: a
/// file-backed microphone `mic` (16 kHz mono, paced in real time; optionally a 2-channel
/// `stereo_mic` too), ALSA's null device as the speaker, and a client connection of the
/// test's own.
final class ClientFixture: Sendable {
    static let services: [(executable: String, busName: String)] = [
        ("earshot-session", "org.earshot.Session1"), ("earshot-capture", "org.earshot.Capture1"),
        ("earshot-alerts", "org.earshot.Alerts1"), ("earshot-pieces", "org.earshot.Pieces1"),
        ("earshot-orchestrator", "org.earshot.Orchestrator1"),
    ]
    static let everything = services.map(\.executable)

    let bus: PrivateBus
    let client: DBusConnection
    /// What the microphone delivers: a ramp that never repeats within 64 KiB, 60 s of it.
    let microphone: [UInt8]
    private let processes = Locked<[String: ServiceProcess]>([:])

    private init(bus: PrivateBus, client: DBusConnection, microphone: [UInt8]) {
        self.bus = bus
        self.client = client
        self.microphone = microphone
    }

    /// Starts a bus and `executables` (in the order given), runs `body`, tears down.
    static func with<T>(_ executables: [String], stereoMicrophone: Bool = false,
                        _ body: (ClientFixture) async throws -> T) async throws -> T {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let microphone = (0..<(16000 * 2 * 60)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        let input = bus.directory.appendingPathComponent("microphone.raw")
        try Data(microphone).write(to: input)
        var devices = ALSATestDevices(configPath: bus.directory.appendingPathComponent("asound.conf"))
        devices.microphone("mic", infile: input, channels: 1)
        if stereoMicrophone { devices.microphone("stereo_mic", infile: input, channels: 2) }
        try devices.write()
        let fixture = ClientFixture(bus: bus, client: try await bus.connect(), microphone: microphone)
        do {
            for executable in executables { _ = try await fixture.launch(executable) }
            let result = try await body(fixture)
            await fixture.shutdown()
            return result
        } catch {
            let logs = fixture.processes.withLock { $0 }.map { "\($0.key):\n\($0.value.logText.suffix(1500))" }.joined(separator: "\n")
            await fixture.shutdown()
            throw HarnessError("\(error)\n\(logs)")
        }
    }

    func launch(_ executable: String) async throws -> ServiceProcess {
        let arguments: [String] = switch executable {
        case "earshot-capture": ["--device", "mic", "--pace", "realtime", "--linger-seconds", "5"]
        case "earshot-alerts": ["--output-device", "null", "--output-pace", "realtime", "--linger-seconds", "5"]
        case "earshot-pieces": ["--data-dir", bus.directory.appendingPathComponent("pieces").path]
        case "earshot-session": ["--state-file", bus.directory.appendingPathComponent("session.json").path]
        default: ["--linger-seconds", "5"]
        }
        let busName = Self.services.first { $0.executable == executable }?.busName
        let environment = ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:" + bus.directory.appendingPathComponent("asound.conf").path]
        let process = try await ServiceProcess(executable, arguments: arguments, bus: bus, busName: busName, environment: environment)
        processes.withLock { $0[executable] = process }
        return process
    }

    func shutdown() async {
        client.close()
        for process in processes.withLock({ Array($0.values) }) { await process.shutdown() }
        await bus.shutdown()
    }

    /// A file in the bus's temporary directory.
    func file(_ name: String) -> URL { bus.directory.appendingPathComponent(name) }

    // MARK: Running the client

    /// Runs `earshot arguments` to its end.
    func earshot(_ arguments: [String], timeout: Duration = .seconds(30)) async throws -> ClientResult {
        try await RunningClient(arguments, bus: bus).wait(timeout: timeout)
    }

    /// Starts `earshot arguments` in the background.
    func start(_ arguments: [String]) throws -> RunningClient {
        try RunningClient(arguments, bus: bus)
    }

    // MARK: Calls of the test's own

    func property(_ busName: String, _ path: ObjectPath, _ interface: String, _ name: String) async throws -> DBusValue? {
        try await client.call(destination: busName, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
                              [.string(interface), .string(name)]).first?.variantValue
    }

    /// Waits until a manager's object-path property (`Current`, `Active`) names an object.
    func waitForObject(_ busName: String, _ name: String, timeout: Duration = .seconds(10)) async throws -> ObjectPath {
        let path = try ObjectPath("/" + busName.replacingOccurrences(of: ".", with: "/"))
        var found: ObjectPath?
        try await eventually("\(busName).\(name) to name an object", timeout: timeout) {
            found = try await property(busName, path, busName, name)?.objectPathValue
            return found.map { $0 != .root } ?? false
        }
        return found!
    }
}
