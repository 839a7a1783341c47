import AlertsCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotService
import Logging

/// Follows the capture service's `Active` and `EndsAtMonotonicUs`: whether a pass-thru
/// runs, and when it ends by its `MaxDuration`, on CLOCK_MONOTONIC as this process reads it.
/// The time left is then exact, whenever it is asked, however late the signals arrive: a
/// request made at that time or after finds no capture in the way. Between a pass-thru's
/// start and the moment its end is known (its prompt rendered, or its first read), the
/// end is unknown, not absent: a request then waits for it (`untilKnown`).
final class CaptureWatch: Sendable {
    private let connection: DBusConnection
    private let logger: Logger
    /// µs; 0 when nothing records (or the capture service is absent).
    private let endsAtUs = Locked<UInt64>(0)
    /// A pass-thru runs (from its acceptance to its end).
    private let active = Locked<Bool>(false)
    private let following = Locked<[PropertyFollowing]>([])
    /// The capture service's unique name, whose own requests (a pass-thru's prompt) never
    /// wait for the end they decide.
    private let captureOwner = Locked<String?>(nil)
    private let ownerWatch = Locked<Task<Void, Never>?>(nil)

    init(connection: DBusConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    func start() async throws {
        // Updated where the signal is read: a request the alerts service reads after the
        // change finds it made.
        let capture = Earshot(connection: connection).capture
        let active = try await capture.followActive { [weak self] path in
            self?.active.withLock { $0 = path != nil }
        }
        let ends = try await capture.followEndsAtMonotonicUs { [weak self] end in
            self?.update(end ?? 0)
        }
        following.withLock { $0 = [active, ends] }
        let owners = try await connection.watchNameOwner(CaptureContract.busName)
        ownerWatch.withLock { watch in
            watch = Task { [weak self] in
                for await owner in owners { self?.captureOwner.withLock { $0 = owner } }
            }
        }
    }

    func stop() {
        following.withLock { $0 }.forEach { $0.cancel() }
        ownerWatch.withLock { $0 }?.cancel()
    }

    /// A pass-thru runs whose end is not known yet.
    var endUnknown: Bool {
        active.withLock { $0 } && endsAtUs.withLock { $0 } == 0
    }

    /// Waits (at most `limit`) while a pass-thru runs whose end is not known yet: its prompt
    /// is being rendered, or its device opened; tens of milliseconds, seconds on a loaded
    /// machine. The capture service's own requests do not wait.
    func untilKnown(for sender: String, limit: Duration = .seconds(10)) async {
        guard endUnknown, !isCaptureService(sender) else { return }
        let started = ContinuousClock.now
        while endUnknown, ContinuousClock.now < started + limit {
            try? await Task.sleep(for: .milliseconds(2))
        }
        if endUnknown {
            logger.warning("a capture pass-thru runs whose end is still not known after \(ContinuousClock.now - started)")
        }
    }

    /// How much longer the current pass-thru records, in whole ms rounded up; nil when
    /// none records. For `sender`'s request: one made while a pass-thru runs whose end is
    /// still not known is told to ask again when it will be. The capture service's own, a
    /// pass-thru's prompt, is never in its way, even once a `BargeIn` pass-thru records.
    func remainingMs(for sender: String) -> UInt64? {
        if isCaptureService(sender) { return nil }
        let end = endsAtUs.withLock { $0 }
        if end == 0 {
            return endUnknown ? AlertQueue.unknownEndRetryMs : nil
        }
        let now = monotonicMicroseconds()
        guard end > now else { return nil }
        return (end - now + 999) / 1000
    }

    /// Whether `sender` is the capture service itself (asking for a pass-thru's prompt).
    private func isCaptureService(_ sender: String) -> Bool {
        sender == captureOwner.withLock { $0 }
    }

    private func update(_ end: UInt64) {
        endsAtUs.withLock { $0 = end }
        if end > 0 { logger.info("a capture pass-thru records until \(end) µs (monotonic), \((end - min(end, monotonicMicroseconds())) / 1000) ms from now") }
    }
}
