import AlertsCore
import Testing

/// Each rejection cause on its own, at its boundaries, with exact try-again times.
@Suite struct RejectionTests {
    static func entry(_ id: UInt64, owner: String = ":1.1", _ priority: AlertPriority = .normal,
                      durationMs: UInt64 = 3000) -> AlertQueue.Entry {
        AlertQueue.Entry(id: id, owner: owner, priority: priority, durationMs: durationMs, hasButtons: false, hasAudio: false)
    }

    @Test func fifthNormalAlertWithinAMinuteWaitsForTheFirstToLeaveTheWindow() {
        var queue = AlertQueue()
        for (index, time) in [UInt64(1000), 2000, 3000, 4000].enumerated() {
            guard case .accepted = queue.submit(Self.entry(UInt64(index)), now: time, captureRemainingMs: nil) else {
                Issue.record("alert \(index) rejected")
                return
            }
        }
        let fifth = queue.submit(Self.entry(10), now: 30_000, captureRemainingMs: nil)
        #expect(fifth == .rejected(AlertEnd(.rateLimited, tryAgainMs: 31_000)))
        // One millisecond before the first leaves: still rejected, by exactly 1 ms.
        #expect(queue.submit(Self.entry(11), now: 60_999, captureRemainingMs: nil) == .rejected(AlertEnd(.rateLimited, tryAgainMs: 1)))
        // Once it has left, the same request is accepted.
        guard case .accepted = queue.submit(Self.entry(12), now: 61_000, captureRemainingMs: nil) else {
            Issue.record("not accepted after the try-again time")
            return
        }
        // Now 2000, 3000, 4000 and 61000 are in the window: the next waits for 2000's exit.
        #expect(queue.submit(Self.entry(13), now: 61_500, captureRemainingMs: nil) == .rejected(AlertEnd(.rateLimited, tryAgainMs: 500)))
    }

    @Test(arguments: AlertPriority.allCases)
    func eachPriorityHasItsOwnLimitPerOwner(priority: AlertPriority) {
        var queue = AlertQueue()
        for index in 0..<priority.rateLimit {
            guard case .accepted = queue.submit(Self.entry(UInt64(index), priority), now: UInt64(index), captureRemainingMs: nil) else {
                Issue.record("alert \(index) of \(priority.rateLimit) rejected")
                return
            }
            // Keep the queue short so that queue-full never interferes.
            _ = queue.cancel(UInt64(index), now: UInt64(index))
        }
        let over = queue.submit(Self.entry(1000, priority), now: 100, captureRemainingMs: nil)
        #expect(over == .rejected(AlertEnd(.rateLimited, tryAgainMs: 60_000 - 100)))
        // Another owner, or another priority, is not limited by it.
        guard case .accepted = queue.submit(Self.entry(1001, owner: ":1.2", priority), now: 100, captureRemainingMs: nil) else {
            Issue.record("another owner was limited")
            return
        }
    }

    @Test func rejectedAlertsDoNotCountAgainstTheLimit() {
        var queue = AlertQueue()
        for index in 0..<4 { _ = queue.submit(Self.entry(UInt64(index)), now: 0, captureRemainingMs: nil) }
        for index in 4..<10 { _ = queue.submit(Self.entry(UInt64(index)), now: 1000, captureRemainingMs: nil) }
        guard case .accepted = queue.submit(Self.entry(20), now: 60_000, captureRemainingMs: nil) else {
            Issue.record("rejections were counted")
            return
        }
    }

    @Test func fullQueueWaitsForThePresentedAlertToEnd() {
        var queue = AlertQueue()
        _ = queue.submit(Self.entry(0, owner: ":1.0", durationMs: 7000), now: 0, captureRemainingMs: nil)
        for index in 1...AlertQueue.maxWaiting {
            _ = queue.submit(Self.entry(UInt64(index), owner: ":1.\(index)"), now: 100, captureRemainingMs: nil)
        }
        #expect(queue.waitingCount == 16)
        let refused = queue.submit(Self.entry(99, owner: ":2.0"), now: 2500, captureRemainingMs: nil)
        #expect(refused == .rejected(AlertEnd(.queueFull, tryAgainMs: 4500)))
        #expect(queue.advance(now: 7000) == [.completed(0, AlertEnd(.timeout)), .presented(1)])
        guard case .accepted = queue.submit(Self.entry(99, owner: ":2.0"), now: 7000, captureRemainingMs: nil) else {
            Issue.record("not accepted once the queue had room")
            return
        }
        // A higher priority needs no room: it preempts.
        guard case .accepted = queue.submit(Self.entry(100, owner: ":2.1", .emergency), now: 7001, captureRemainingMs: nil) else {
            Issue.record("a preempting alert was refused for a full queue")
            return
        }
    }

    @Test func captureActiveRejectsAllButEmergency() {
        var queue = AlertQueue()
        #expect(queue.submit(Self.entry(1, .voicecom), now: 0, captureRemainingMs: 2345)
                == .rejected(AlertEnd(.captureActive, tryAgainMs: 2345)))
        #expect(queue.submit(Self.entry(2), now: 0, captureRemainingMs: 0) == .accepted([.presented(2)]))
        guard case .accepted = queue.submit(Self.entry(3, .emergency), now: 1, captureRemainingMs: 2345) else {
            Issue.record("EMERGENCY was refused during a capture")
            return
        }
    }

    @Test func theLongestOfSeveralCausesWins() {
        var queue = AlertQueue()
        for index in 0..<4 { _ = queue.submit(Self.entry(UInt64(index)), now: UInt64(index), captureRemainingMs: nil) }
        // Rate limit: 60000 - 10 + 0 = 59990 ms; capture: 5000 ms.
        #expect(queue.submit(Self.entry(9), now: 10, captureRemainingMs: 5000) == .rejected(AlertEnd(.rateLimited, tryAgainMs: 59_990)))
        var other = AlertQueue()
        #expect(other.submit(Self.entry(9), now: 10, captureRemainingMs: 90_000) == .rejected(AlertEnd(.captureActive, tryAgainMs: 90_000)))
    }
}
