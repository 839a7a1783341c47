import EarshotContract
import EarshotDBus
import EarshotService
import Logging

/// Follows the capture service's `EndsAtMonotonicUs`: when the pass-thru recording now ends
/// by its `MaxDuration`, on CLOCK_MONOTONIC as this process reads it (0: none records).
/// The time left is then exact, whenever it is asked, however late the signals arrive: a
/// request made at that time or after finds no capture in the way.
final class CaptureWatch: Sendable {
    static let busName = CaptureContract.busName
    static let managerPath = ObjectPath(declared: CaptureContract.managerPath)
    static let properties = "org.freedesktop.DBus.Properties"
    static let property = CaptureContract.Manager.endsAtMonotonicUs.name

    private let connection: DBusConnection
    private let logger: Logger
    /// µs; 0 when nothing records (or the capture service is absent).
    private let endsAtUs = Locked<UInt64>(0)
    private let tasks = BackgroundTasks()

    init(connection: DBusConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    func start() async throws {
        let changes = try await connection.subscribe(MatchRule(sender: Self.busName, interface: Self.properties,
                                                               member: "PropertiesChanged", path: Self.managerPath))
        let owners = try await connection.watchNameOwner(Self.busName)
        tasks.run { [weak self] in
            for await signal in changes {
                guard let values = signal.body.dropFirst().first?.stringKeyedValue, let end = values[Self.property]?.uint64Value else { continue }
                self?.update(end)
            }
        }
        tasks.run { [weak self] in
            for await owner in owners {
                guard let self else { return }
                self.endsAtUs.withLock { $0 = 0 }
                if owner != nil { await self.read() }
            }
        }
    }

    func stop() {
        tasks.cancelAll()
    }

    /// How much longer the current pass-thru records, in whole ms rounded up; nil when
    /// none records.
    func remainingMs() -> UInt64? {
        let end = endsAtUs.withLock { $0 }
        let now = monotonicMicroseconds()
        guard end > now else { return nil }
        return (end - now + 999) / 1000
    }

    private func update(_ end: UInt64) {
        endsAtUs.withLock { $0 = end }
        if end > 0 { logger.info("a capture pass-thru records until \(end) µs (monotonic), \((end - min(end, monotonicMicroseconds())) / 1000) ms from now") }
    }

    private func read() async {
        guard let reply = try? await connection.call(destination: Self.busName, path: Self.managerPath, interface: Self.properties,
                                                     member: "Get", [.string(CaptureContract.Manager.interface.name), .string(Self.property)]),
              let end = reply.first?.variantValue?.uint64Value else { return }
        update(end)
    }
}
