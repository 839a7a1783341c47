import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc
import Testing

/// The interfaces the tests call, as the contract declares them (their members, properties
/// and keys).
typealias Capture = CaptureContract.Manager
typealias PassThruMembers = CaptureContract.PassThru
typealias Alerts = AlertsContract.Manager
typealias AlertMembers = AlertsContract.Alert
typealias Pieces = PiecesContract.Manager
typealias Session = SessionContract.Manager
typealias Orchestrator = OrchestratorContract.Manager
typealias JobMembers = OrchestratorContract.Job

/// Every Earshot service on a system bus configured like a head unit's: Debian's
/// system.conf baseline followed by the project's policy (`dbus/org.earshot.conf`), the
/// services running `--system` as the user `earshot`, and clients as other users
/// (`BusAgent`s): alice and bob in the group `audio`, eve not in it. The test's own
/// connection is root's.
final class PolicyStack: Sendable {
    static let serviceUser = "earshot"
    static let alice = "earshot-alice"
    static let bob = "earshot-bob"
    static let eve = "earshot-eve"

    static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    static let disallowed = EarshotErrorName.disallowed.name

    static let capture = CaptureContract.busName
    static let alerts = AlertsContract.busName
    static let pieces = PiecesContract.busName
    static let session = SessionContract.busName
    static let orchestrator = OrchestratorContract.busName
    static let names = [capture, alerts, pieces, session, orchestrator]

    static func path(of name: String) -> String { "/" + name.replacingOccurrences(of: ".", with: "/") }

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The users, created once per test process (dbus-daemon refuses a policy naming a
    /// user that does not exist, so before any bus starts).
    static let users = Task<Void, any Error> {
        try await TestUser.ensure(serviceUser, in: ["audio"])
        // People's accounts: earshot-open-as acts for ordinary users only.
        try await TestUser.ensure(alice, in: ["audio"], ordinary: true)
        try await TestUser.ensure(bob, in: ["audio"], ordinary: true)
        try await TestUser.ensure(eve, in: [], notIn: ["audio"], ordinary: true)
    }

    /// The bus's policy: the system baseline, then the project's `<policy>` elements.
    static func policy() throws -> String {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("dbus/org.earshot.conf"), encoding: .utf8)
        guard let start = text.range(of: "<busconfig>"), let end = text.range(of: "</busconfig>") else {
            throw HarnessError("dbus/org.earshot.conf has no <busconfig> element")
        }
        return PrivateBus.systemBaselinePolicy + "\n" + String(text[start.upperBound..<end.lowerBound])
    }

    let stack: ServiceStack
    private let script: URL
    private let agents = Locked<[BusAgent]>([])

    private init(stack: ServiceStack, script: URL) {
        self.stack = stack
        self.script = script
    }

    /// Starts the bus and every service, runs `body`, ends the agents and tears down.
    static func with<T>(_ body: (PolicyStack) async throws -> T) async throws -> T {
        try await users.value
        let system = ServiceStack.SystemBus(policy: try policy(), user: serviceUser)
        return try await ServiceStack.with(systemBus: system) { stack in
            let script = stack.file("agent.py")
            try BusAgent.program.write(to: script, atomically: true, encoding: .utf8)
            chmod(script.path, 0o644)
            let fixture = PolicyStack(stack: stack, script: script)
            do {
                let result = try await body(fixture)
                await fixture.endAgents()
                return result
            } catch {
                let logs = fixture.agents.withLock { $0 }.map { "agent \($0.user):\n\($0.logText.suffix(1500))" }
                await fixture.endAgents()
                throw HarnessError("\(error)\n\(logs.joined(separator: "\n"))")
            }
        }
    }

    /// A client connected as `user`.
    func agent(_ user: String) async throws -> BusAgent {
        let agent = try await BusAgent.start(user: user, script: script, address: stack.bus.address,
                                             logPath: stack.file("agent-\(user)-\(UUID().uuidString.prefix(8)).log").path)
        agents.withLock { $0.append(agent) }
        return agent
    }

    private func endAgents() async {
        for agent in agents.withLock({ $0 }) { await agent.shutdown() }
    }

    /// Earshot through EarshotClient on the root connection, and the objects the agents
    /// made, by the paths they were told.
    var earshot: Earshot { Earshot(connection: stack.client) }
    func passThru(_ path: String) throws -> PassThruControl { earshot.capture.passThru(at: try ObjectPath(path)) }
    func job(_ path: String) throws -> JobControl { earshot.orchestrator.job(at: try ObjectPath(path)) }
    func alert(_ path: String) throws -> AlertControl { earshot.alerts.alert(at: try ObjectPath(path)) }

    /// Waits until `property` of `object` is `value`, as root reads it; fails after `timeout`.
    func waitFor<Object: EarshotObject, Value: Equatable & Sendable>(_ object: Object, _ property: ObjectProperty<Object, Value>,
                                                                     toBe value: Value, timeout: Duration = .seconds(15),
                                                                     sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + timeout
        var last: Value?
        while ContinuousClock.now < deadline {
            last = try await object.read(property)
            if last == value { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("\(property.declaration.name) is \(String(describing: last)), not \(value), after \(timeout)", sourceLocation: sourceLocation)
        throw HarnessError("\(property.declaration.name) did not become \(value)")
    }

    /// A one-second 16 kHz mono 16-bit WAV file (a 440 Hz tone) owned by `user`, readable
    /// by everyone.
    func wave(_ name: String, ownedBy user: String) throws -> String {
        let rate = 16000
        let samples = (0..<rate).map { Int16(8000 * sin(2 * Double.pi * 440 * Double($0) / Double(rate))) }
        var data = Data(PCMWave.header(sampleRate: UInt32(rate), channels: 1, bitsPerSample: 16, dataBytes: UInt64(samples.count * 2)))
        samples.withUnsafeBytes { data.append(contentsOf: $0) }
        let url = stack.file(name)
        try data.write(to: url)
        guard let owner = TestUser.lookup(user), chown(url.path, owner.uid, owner.gid) == 0, chmod(url.path, 0o644) == 0 else {
            throw HarnessError("cannot hand \(url.path) to \(user)")
        }
        return url.path
    }
}

extension BusAgent {
    /// Calls the declared `method` and returns the reply, or the error the agent got.
    func call(_ destination: String, _ path: String, _ interface: String, _ method: MethodDeclaration, signature: String = "",
              _ arguments: [AgentArgument] = []) async throws -> AgentReply {
        try await call(destination, path, interface, method.name, signature: signature, arguments)
    }

    /// `org.freedesktop.DBus.Properties.Get` of the declared `property`.
    func property(_ destination: String, _ path: String, _ interface: String, _ property: PropertyDeclaration) async throws -> AgentReply {
        try await self.property(destination, path, interface, property.name)
    }

    /// `PerformAudioPassThru` from the microphone: 16 kHz, 16-bit, for at most `maxMs`.
    func performAudioPassThru(maxMs: UInt32 = 30000) async throws -> AgentReply {
        typealias Keys = Capture.Keys
        return try await call(PolicyStack.capture, PolicyStack.path(of: PolicyStack.capture), PolicyStack.capture,
                              Capture.performAudioPassThru, signature: "a{sv}",
                              [.dictionary([Keys.samplingRate.name: .u(16000), Keys.bitsPerSample.name: .u(16),
                                            Keys.audioType.name: .s("PCM"), Keys.maxDuration.name: .u(maxMs)])])
    }

    /// `Drop` of a piece whose mix stem is the file at `path`.
    func drop(title: String, mixStemPath path: String) async throws -> AgentReply {
        typealias Keys = Pieces.PieceKeys
        return try await call(PolicyStack.pieces, PolicyStack.path(of: PolicyStack.pieces), PolicyStack.pieces, Pieces.drop,
                              signature: "a{sv}", [.dictionary([Keys.title.name: .s(title), Keys.mixStem.path.name: .s(path)])])
    }

    /// `PresentAlert` with `text` and one soft button (so it stays until acted on).
    func presentAlertWithButton(_ text: String) async throws -> AgentReply {
        let button = AgentArgument.dictionary([Alerts.SoftButtonKeys.id.name: .variant("q", .integer(1)),
                                               Alerts.SoftButtonKeys.text.name: .s("OK")])
        return try await call(PolicyStack.alerts, PolicyStack.path(of: PolicyStack.alerts), PolicyStack.alerts, Alerts.presentAlert,
                              signature: "a{sv}", [.dictionary([Alerts.Keys.text.name: .s(text),
                                                                Alerts.Keys.softButtons.name: .variant("aa{sv}", .list([button]))])])
    }

    /// `RecordPiece` that ends with its owner.
    func recordPiece(title: String) async throws -> AgentReply {
        typealias Keys = Orchestrator.Keys
        return try await call(PolicyStack.orchestrator, PolicyStack.path(of: PolicyStack.orchestrator), PolicyStack.orchestrator,
                              Orchestrator.recordPiece, signature: "a{sv}",
                              [.dictionary([Keys.title.name: .s(title), Keys.maxDuration.name: .u(30000),
                                            Keys.outliveOwner.name: .b(false)])])
    }
}
