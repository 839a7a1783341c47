import EarshotSync
import Testing

/// `firstToEnd` and `waitAtMost`: the caller goes on without waiting for work that never ends.
@Suite(.timeLimit(.minutes(1))) struct WaitingTests {
    /// Waits until `flag` is set (a loser's cancellation runs once its task gets a thread,
    /// which other suites may delay).
    static func eventually(_ flag: Locked<Bool>) async -> Bool {
        for _ in 0..<6000 where !flag.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
        return flag.withLock { $0 }
    }

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
        // Returned at all: the endless body never ends. (Bounded loosely: other suites may
        // hold the cooperative pool for seconds.)
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(await Self.eventually(cancelled), "the loser is cancelled")
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
        #expect(await Self.eventually(cancelled))
    }

    @Test func waitAtMostReturnsInTimeOrWhenTheWorkEnds() async {
        let finished = Locked(false)
        let quick = await waitAtMost(.seconds(60)) { finished.withLock { $0 = true } }
        #expect(quick && finished.withLock { $0 })

        // Work held until the test lets it go: the caller goes on after its patience.
        let gate = Locked<CheckedContinuation<Void, Never>?>(nil)
        let slow = Locked(false)
        let inTime = await waitAtMost(.milliseconds(100)) {
            await withCheckedContinuation { continuation in gate.withLock { $0 = continuation } }
            slow.withLock { $0 = true }
        }
        #expect(!inTime)
        #expect(!slow.withLock { $0 }, "still at work when the caller went on")
        // Let go, it finishes on its own.
        while gate.withLock({ $0 }) == nil { try? await Task.sleep(for: .milliseconds(5)) }
        gate.withLock { $0 }?.resume()
        while !slow.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
    }
}
