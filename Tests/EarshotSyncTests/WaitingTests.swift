import EarshotSync
import Testing

/// `firstToEnd` and `waitAtMost`: the caller goes on without waiting for work that never ends.
@Suite struct WaitingTests {
    /// Work that ends only when cancelled, and records that it was.
    static func endless(_ cancelled: Locked<Bool>) async throws -> Int {
        try await withTaskCancellationHandler {
            // An await that never ends and ignores cancellation, like a reply that is never sent.
            await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
            return 0
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    @Test func theFirstToEndWinsAndTheOtherIsNotWaitedFor() async throws {
        let cancelled = Locked(false)
        let started = ContinuousClock.now
        let value = try await firstToEnd({ try await Self.endless(cancelled) }, {
            try await Task.sleep(for: .milliseconds(50))
            return 7
        })
        #expect(value == 7)
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(cancelled.withLock { $0 }, "the loser is cancelled")
    }

    @Test func anErrorEndsTheRaceToo() async {
        struct Failed: Error {}
        await #expect(throws: Failed.self) {
            _ = try await firstToEnd({ try await Self.endless(Locked(false)) }, { throw Failed() })
        }
    }

    @Test func theCallersCancellationEndsTheWait() async {
        let cancelled = Locked(false)
        let waiting = Task { try await firstToEnd({ try await Self.endless(cancelled) }, { try await Self.endless(Locked(false)) }) }
        try? await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        #expect(cancelled.withLock { $0 })
    }

    @Test func waitAtMostReturnsInTimeOrWhenTheWorkEnds() async {
        let finished = Locked(false)
        let quick = await waitAtMost(.seconds(5)) { finished.withLock { $0 = true } }
        #expect(quick && finished.withLock { $0 })
        let slow = Locked(false)
        let started = ContinuousClock.now
        let inTime = await waitAtMost(.milliseconds(100)) {
            try? await Task.sleep(for: .milliseconds(600))
            slow.withLock { $0 = true }
        }
        #expect(!inTime && ContinuousClock.now - started < .milliseconds(500))
        #expect(!slow.withLock { $0 }, "still at work when the caller went on")
        try? await Task.sleep(for: .seconds(1))
        #expect(slow.withLock { $0 }, "and finished on its own")
    }
}
