import EarshotDBus
import Logging

/// Follows the capture service closely enough to say how much longer a microphone
/// pass-thru records: its owner, its manager's `Active` object, and that object's `State`.
///
/// Remaining time = `MaxDuration` − the time recorded so far, where the time recorded so
/// far is the larger of the time since recording started (as seen here) and the frames
/// the pass-thru reports.
final class CaptureWatch: Sendable {
    static let busName = "org.earshot.Capture1"
    static let managerPath: ObjectPath = "/org/earshot/Capture1"
    static let passThru = "org.earshot.Capture1.PassThru"
    static let properties = "org.freedesktop.DBus.Properties"

    private struct PassThru {
        var path: ObjectPath
        var maxDurationMs: UInt64 = 0
        var recordingSinceMs: UInt64?
    }

    private let connection: DBusConnection
    private let logger: Logger
    private let active = Locked<PassThru?>(nil)
    private let tasks = Locked<[Task<Void, Never>]>([])

    init(connection: DBusConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    func start() async throws {
        let changes = try await connection.subscribe(MatchRule(sender: Self.busName, interface: Self.properties,
                                                               member: "PropertiesChanged"))
        let owners = try await connection.watchNameOwner(Self.busName)
        let watching = Task { [weak self] in
            for await signal in changes {
                await self?.changed(signal)
            }
        }
        let following = Task { [weak self] in
            for await owner in owners {
                guard let self else { return }
                self.active.withLock { $0 = nil }
                if owner != nil { await self.readActive() }
            }
        }
        tasks.withLock { $0 = [watching, following] }
    }

    func stop() {
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }

    /// How much longer the current pass-thru records, in ms; nil when none is recording.
    func remainingMs() async -> UInt64? {
        guard let known = active.withLock({ $0 }), let since = known.recordingSinceMs else { return nil }
        let now = AlertsService.now()
        var elapsed = now > since ? now - since : 0
        // The frames captured so far, when the pass-thru can still be read.
        if let values = try? await getAll(known.path),
           let frames = values["FramesCaptured"]?.uint64Value, let rate = values["SamplingRate"]?.uint32Value, rate > 0 {
            if values["State"]?.stringValue != "recording" { return nil }
            elapsed = max(elapsed, frames * 1000 / UInt64(rate))
        }
        return known.maxDurationMs > elapsed ? known.maxDurationMs - elapsed : nil
    }

    private func changed(_ signal: DBusMessage) async {
        guard signal.body.count >= 2, let interface = signal.body[0].stringValue,
              let values = signal.body[1].stringKeyedValue, let path = signal.path else { return }
        if path == Self.managerPath, interface == Self.busName, let activePath = values["Active"]?.objectPathValue {
            await follow(activePath)
        } else if interface == Self.passThru, let state = values["State"]?.stringValue {
            active.withLock { known in
                guard known?.path == path else { return }
                if state == "recording", known?.recordingSinceMs == nil { known?.recordingSinceMs = AlertsService.now() }
                if state == "finished" { known = nil }
            }
        }
    }

    private func readActive() async {
        guard let reply = try? await connection.call(destination: Self.busName, path: Self.managerPath, interface: Self.properties,
                                                     member: "Get", [.string(Self.busName), .string("Active")]),
              let path = reply.first?.variantValue?.objectPathValue else { return }
        await follow(path)
    }

    private func follow(_ path: ObjectPath) async {
        guard path != .root else {
            active.withLock { $0 = nil }
            return
        }
        let seen = AlertsService.now()
        active.withLock { $0 = PassThru(path: path) }
        guard let values = try? await getAll(path) else { return }
        let maxDuration = UInt64(values["MaxDuration"]?.uint32Value ?? 0)
        let rate = UInt64(values["SamplingRate"]?.uint32Value ?? 0)
        let frames = values["FramesCaptured"]?.uint64Value ?? 0
        let recording = values["State"]?.stringValue == "recording"
        active.withLock { known in
            guard known?.path == path else { return }
            known?.maxDurationMs = maxDuration
            if recording, known?.recordingSinceMs == nil {
                let recorded = rate > 0 ? frames * 1000 / rate : 0
                known?.recordingSinceMs = seen > recorded ? seen - recorded : 0
            }
        }
        logger.info("capture pass-thru \(path) is \(recording ? "recording" : "prompting"), \(maxDuration) ms")
    }

    private func getAll(_ path: ObjectPath) async throws -> [String: DBusValue] {
        let reply = try await connection.call(destination: Self.busName, path: path, interface: Self.properties,
                                              member: "GetAll", [.string(Self.passThru)], timeout: .seconds(2))
        return reply.first?.stringKeyedValue ?? [:]
    }
}
