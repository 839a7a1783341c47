import EarshotClient
import EarshotDBus
import EarshotService
import Logging

/// Follows the capture service's `EndsAtMonotonicUs`: when the pass-thru recording now ends
/// by its `MaxDuration`, on CLOCK_MONOTONIC as this process reads it (0: none records).
/// The time left is then exact, whenever it is asked, however late the signals arrive: a
/// request made at that time or after finds no capture in the way.
final class CaptureWatch: Sendable {
    private let connection: DBusConnection
    private let logger: Logger
    /// µs; 0 when nothing records (or the capture service is absent).
    private let endsAtUs = Locked<UInt64>(0)
    private let following = Locked<PropertyFollowing?>(nil)

    init(connection: DBusConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    func start() async throws {
        // Updated where the signal is read: a request the alerts service reads after the
        // change finds it made.
        let handle = try await Earshot(connection: connection).capture.followEndsAtMonotonicUs { [weak self] end in
            self?.update(end ?? 0)
        }
        following.withLock { $0 = handle }
    }

    func stop() {
        following.withLock { $0 }?.cancel()
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
}
