import EarshotContract
import EarshotDBus
import Foundation
import Glibc

/// A private bus with some or all of the Earshot services, as a head unit would run them:
/// a file-backed microphone `mic` (16 kHz mono, paced in real time; optionally a 2-channel
/// `stereo_mic` too), ALSA's null device as the speaker, and a client connection of the
/// test's own. With `SystemBus`, the bus is a system bus with a policy and the services
/// run on it as a service user.
public final class ServiceStack: Sendable {
    /// How a stack runs as on a system bus: a `system`-type bus configured with `policy`
    /// (every `<policy>` element), the services started with `--system` and the bus's
    /// address, as `user`, who then owns the bus's directory (where the microphone file,
    /// the piece store and the session's state file are); the directory and the files the
    /// stack writes are readable by everyone.
    public struct SystemBus: Sendable {
        public var policy: String
        public var user: String

        public init(policy: String, user: String) {
            self.policy = policy
            self.user = user
        }
    }

    /// In the order they start: the session first, the orchestrator last.
    public static let services: [(executable: String, busName: String)] = [
        SessionContract.service, CaptureContract.service, AlertsContract.service, PiecesContract.service, OrchestratorContract.service,
    ].map { ($0.executable, $0.busName) }
    public static let everything = services.map(\.executable)

    public let bus: PrivateBus
    public let client: DBusConnection
    /// What the microphone delivers: a ramp that never repeats within 64 KiB, 60 s of it.
    public let microphone: [UInt8]
    /// Set when the stack runs as on a system bus.
    public let systemBus: SystemBus?
    private let processes = Locked<[String: ServiceProcess]>([:])

    private init(bus: PrivateBus, client: DBusConnection, microphone: [UInt8], systemBus: SystemBus?, openAsSocket: String?) {
        self.bus = bus
        self.client = client
        self.microphone = microphone
        self.systemBus = systemBus
        self.openAsSocket = openAsSocket
    }

    /// Where the stack's earshot-open-as listens (on a system bus).
    public let openAsSocket: String?

    /// Starts a bus and `executables` (in the order given), runs `body`, tears down.
    public static func with<T>(_ executables: [String] = everything, stereoMicrophone: Bool = false, systemBus: SystemBus? = nil,
                               _ body: (ServiceStack) async throws -> T) async throws -> T {
        let bus: PrivateBus
        if let systemBus {
            bus = try await PrivateBus.start(policy: systemBus.policy, busType: "system")
        } else {
            bus = try await PrivateBus.start()
        }
        defer { bus.stop() }
        let microphone = (0..<(16000 * 2 * 60)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        let input = bus.directory.appendingPathComponent("microphone.raw")
        try Data(microphone).write(to: input)
        var devices = ALSATestDevices(configPath: bus.directory.appendingPathComponent("asound.conf"))
        devices.microphone("mic", infile: input, channels: 1)
        if stereoMicrophone { devices.microphone("stereo_mic", infile: input, channels: 2) }
        try devices.write()
        if let systemBus {
            guard let user = TestUser.lookup(systemBus.user) else { throw HarnessError("no user \(systemBus.user)") }
            for file in [input, devices.configPath] { chmod(file.path, 0o644) }
            guard chown(bus.directory.path, user.uid, user.gid) == 0, chmod(bus.directory.path, 0o755) == 0 else {
                throw HarnessError("cannot hand \(bus.directory.path) to \(systemBus.user): \(String(cString: strerror(errno)))")
            }
        }
        // On a system bus, paths callers name are opened by earshot-open-as, as on a head unit.
        let openAs = try systemBus.map { try OpenAsHelper(directory: bus.directory, user: $0.user, busAddress: bus.address) }
        defer { openAs?.stop() }
        let fixture = ServiceStack(bus: bus, client: try await bus.connect(), microphone: microphone, systemBus: systemBus,
                                   openAsSocket: openAs?.socketPath)
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

    /// Starts `executable` (again, after it exited) on the stack's bus and waits until it
    /// owns its name; `arguments` replaces the stack's usual arguments for it.
    public func launch(_ executable: String, arguments replacement: [String]? = nil) async throws -> ServiceProcess {
        var arguments: [String] = if let replacement { replacement } else { switch executable {
        case "earshot-capture": ["--device", "mic", "--pace", "realtime", "--linger-seconds", "5"]
        case "earshot-alerts": ["--output-device", "null", "--output-pace", "realtime", "--linger-seconds", "5"]
        case "earshot-pieces": ["--data-dir", bus.directory.appendingPathComponent("pieces").path]
        case "earshot-session": ["--state-file", bus.directory.appendingPathComponent("session.json").path]
        default: ["--linger-seconds", "5"]
        } }
        var prefix: [String] = []
        if let systemBus {
            arguments.append("--system")
            prefix = try TestUser.commandPrefix(systemBus.user)
        }
        let busName = Self.services.first { $0.executable == executable }?.busName
        var environment = ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:" + bus.directory.appendingPathComponent("asound.conf").path]
        if let openAsSocket { environment["EARSHOT_OPEN_AS_SOCKET"] = openAsSocket }
        let process = try await ServiceProcess(executable, arguments: arguments, bus: bus, busName: busName, environment: environment,
                                               commandPrefix: prefix)
        processes.withLock { $0[executable] = process }
        return process
    }

    public func shutdown() async {
        client.close()
        for process in processes.withLock({ Array($0.values) }) { await process.shutdown() }
        await bus.shutdown()
    }

    /// A file in the bus's temporary directory.
    public func file(_ name: String) -> URL { bus.directory.appendingPathComponent(name) }

    /// The running process of `executable`, if it was launched.
    public func process(_ executable: String) -> ServiceProcess? { processes.withLock { $0[executable] } }
}
