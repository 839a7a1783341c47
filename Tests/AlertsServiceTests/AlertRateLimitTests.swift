import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Testing

/// The rate limit's refusal, beside the others (most of it is a minute's wait).
@Suite struct AlertRateLimitTests {
    @Test(.timeLimit(.minutes(3)))
    func fifthNormalAlertWithinAMinuteIsRateLimited() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let start = monotonicMicroseconds()
            for index in 0..<4 {
                try await f.present(.text("alert \(index)")).cancel()
            }
            // The first of the four leaves the window 60 s after it was accepted.
            let tryAgain = try await AlertRejectionTests.ruleHolds(f, .text("fifth"), on: f.client,
                                                                   reason: .rateLimited, completions: completions)
            let sinceStart = Double(monotonicMicroseconds() - start) / 1000
            #expect(Double(tryAgain) <= 60_000 && Double(tryAgain) > 60_000 - sinceStart - AlertRejectionTests.tolerance)
        }
    }
}
