import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc
import Testing

/// Every Earshot service on one private bus, as a head unit would run them: a file-backed
/// microphone (16 kHz mono, paced in real time), ALSA's null device as the speaker, the
/// session, capture, alerts, pieces and the orchestrator.
final class Deployment: Sendable {
    static let orchestrator = "org.earshot.Orchestrator1"
    static let path: ObjectPath = "/org/earshot/Orchestrator1"
    static let job = "org.earshot.Orchestrator1.Job"
    static let services: [(executable: String, busName: String)] = [
        ("earshot-session", "org.earshot.Session1"), ("earshot-capture", "org.earshot.Capture1"),
        ("earshot-alerts", "org.earshot.Alerts1"), ("earshot-pieces", "org.earshot.Pieces1"),
        ("earshot-orchestrator", "org.earshot.Orchestrator1"),
    ]

    let bus: PrivateBus
    let client: DBusConnection
    let microphone: [UInt8]
    private let processes: Locked<[String: ServiceProcess]>

    private init(bus: PrivateBus, client: DBusConnection, microphone: [UInt8], processes: [String: ServiceProcess]) {
        self.bus = bus
        self.client = client
        self.microphone = microphone
        self.processes = Locked(processes)
    }

    static func with<T>(_ body: (Deployment) async throws -> T) async throws -> T {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        // A ramp that never repeats within 64 KiB, 60 s of it.
        let microphone = (0..<(16000 * 2 * 60)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        let input = bus.directory.appendingPathComponent("microphone.raw")
        try Data(microphone).write(to: input)
        var devices = ALSATestDevices(configPath: bus.directory.appendingPathComponent("asound.conf"))
        devices.microphone("mic", infile: input, channels: 1)
        try devices.write()
        var processes: [String: ServiceProcess] = [:]
        let deployment = Deployment(bus: bus, client: try await bus.connect(), microphone: microphone, processes: [:])
        do {
            for (executable, _) in services {
                processes[executable] = try await deployment.launch(executable)
            }
            deployment.processes.withLock { $0 = processes }
            let result = try await body(deployment)
            await deployment.shutdown()
            return result
        } catch {
            await deployment.shutdown()
            let logs = deployment.processes.withLock { $0 }.merging(processes) { current, _ in current }
                .map { "\($0.key):\n\($0.value.logText.suffix(1500))" }.joined(separator: "\n")
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

    func process(_ executable: String) -> ServiceProcess? { processes.withLock { $0[executable] } }

    func shutdown() async {
        client.close()
        for process in processes.withLock({ Array($0.values) }) { await process.shutdown() }
        await bus.shutdown()
    }

    // MARK: Calls

    func record(_ request: [String: DBusValue], on connection: DBusConnection? = nil) async throws -> ObjectPath {
        let reply = try await (connection ?? client).call(destination: Self.orchestrator, path: Self.path, interface: Self.orchestrator,
                                                          member: "RecordPiece", [.vardict(request)])
        return try #require(reply.first?.objectPathValue)
    }

    func jobProperty(_ path: ObjectPath, _ name: String) async throws -> DBusValue? {
        try await client.call(destination: Self.orchestrator, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
                              [.string(Self.job), .string(name)]).first?.variantValue
    }

    func pieces(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await client.call(destination: "org.earshot.Pieces1", path: "/org/earshot/Pieces1", interface: "org.earshot.Pieces1",
                              member: member, arguments)
    }

    /// Subscribes to a job's `Finished` and `PropertiesChanged`.
    func watch(on connection: DBusConnection? = nil) async throws -> (finished: SignalSubscription, changes: SignalSubscription) {
        let connection = connection ?? client
        return (try await connection.subscribe(MatchRule(sender: Self.orchestrator, interface: Self.job, member: "Finished")),
                try await connection.subscribe(MatchRule(sender: Self.orchestrator, interface: "org.freedesktop.DBus.Properties",
                                                         member: "PropertiesChanged")))
    }

    /// Waits for `path`'s `Finished`: (resultCode, pieceId, info).
    static func finished(_ subscription: SignalSubscription, _ path: ObjectPath, timeout: Duration = .seconds(30))
        async throws -> (code: String, pieceID: String, info: [String: DBusValue]) {
        let deadline = ContinuousClock.now + timeout
        while let signal = await subscription.next(timeout: deadline - ContinuousClock.now) {
            guard signal.path == path, signal.body.count == 3 else { continue }
            return (signal.body[0].stringValue ?? "", signal.body[1].stringValue ?? "", signal.body[2].stringKeyedValue ?? [:])
        }
        throw HarnessError("no Finished from \(path) within \(timeout)")
    }

    /// Waits until `path`'s `State` becomes `state` (from PropertiesChanged).
    static func state(_ subscription: SignalSubscription, _ path: ObjectPath, becomes state: String,
                      timeout: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now + timeout
        while let signal = await subscription.next(timeout: deadline - ContinuousClock.now) {
            if signal.path == path, signal.body.count > 1, signal.body[1].stringKeyedValue?["State"]?.stringValue == state { return }
        }
        throw HarnessError("\(path) did not become \(state) within \(timeout)")
    }
}
