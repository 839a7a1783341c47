@testable import EarshotDBus
@testable import EarshotService
import Synchronization
import Testing

/// `MemoryReturn.trimPeriodically`: memory goes back while calls come and once after they
/// stop, and an idle service is left alone until its next call.
@Suite struct PeriodicTrimTests {
    /// Trims and releases done so far.
    final class Counts: Sendable {
        let trims = Atomic(0)
        let releases = Atomic(0)
        /// Trims done when the releases last ran.
        let trimsAtRelease = Atomic(0)
        var now: (trims: Int, releases: Int) { (trims.load(ordering: .relaxed), releases.load(ordering: .relaxed)) }
    }

    static let interval = Duration.milliseconds(20)

    /// Waits (up to 5 s) until `done` holds.
    static func wait(until done: () -> Bool) async throws {
        for _ in 0..<500 where !done() {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func idleServicesAreLeftAloneAndCallsStartTheTrimsAgain() async throws {
        let calls = InFlightCalls()
        let counts = Counts()
        let loop = Task {
            await MemoryReturn.trimPeriodically(calls: calls, interval: Self.interval,
                                                release: {
                                                    counts.trimsAtRelease.store(counts.trims.load(ordering: .relaxed), ordering: .relaxed)
                                                    counts.releases.add(1, ordering: .relaxed)
                                                },
                                                trim: { counts.trims.add(1, ordering: .relaxed) })
        }
        // One trim at once, then nothing for ten intervals without a call.
        try await Self.wait { counts.now.trims == 1 }
        try await Task.sleep(for: Self.interval * 10)
        #expect(counts.now == (1, 0))

        // A call served: one trim for its interval, the releases and a trim for the first
        // quiet one, one more trim for the next, then nothing again.
        #expect(calls.admit("Ping") == nil)
        calls.finished()
        try await Self.wait { counts.now.trims == 4 }
        try await Task.sleep(for: Self.interval * 10)
        #expect(counts.now == (4, 1))
        #expect(counts.trimsAtRelease.load(ordering: .relaxed) == 2)

        // A call left unanswered keeps every interval busy: trims, and no releases yet.
        #expect(calls.admit("Slow") == nil)
        try await Self.wait { counts.now.trims >= 7 }
        #expect(counts.now.releases == 1)
        calls.finished()
        try await Self.wait { counts.now.releases == 2 }
        try await Task.sleep(for: Self.interval * 10)
        // The releases' trim and one more.
        #expect(counts.now == (counts.trimsAtRelease.load(ordering: .relaxed) + 2, 2))

        // Cancelled while waiting for a call: it returns.
        loop.cancel()
        await loop.value
    }

    @Test func nextCallReturnsForACallAlreadyAdmittedAndWhenCancelled() async throws {
        let calls = InFlightCalls()
        let before = calls.activity
        #expect(calls.admit("Ping") == nil)
        // Admitted before the wait began: no waiting.
        await calls.nextCall(after: before.admitted)
        calls.finished()

        let waiting = Task { await calls.nextCall(after: calls.activity.admitted) }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await waiting.value
    }

    @Test func quietMeansNoCallAdmittedAndNoneUnanswered() {
        let idle = CallActivity(admitted: 7, unanswered: 0)
        #expect(CallActivity(admitted: 7, unanswered: 0).isQuiet(since: idle))
        #expect(!CallActivity(admitted: 8, unanswered: 0).isQuiet(since: idle))
        #expect(!CallActivity(admitted: 7, unanswered: 1).isQuiet(since: idle))
        #expect(!idle.isQuiet(since: CallActivity(admitted: 7, unanswered: 1)))
    }
}
