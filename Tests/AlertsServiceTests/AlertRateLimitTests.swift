import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Testing

/// The rate limit's refusal, beside the others (most of it is a minute's wait).
@Suite struct AlertRateLimitTests {
    private typealias Keys = AlertsContract.Manager.Keys
    private typealias Alert = AlertsContract.Alert

    @Test(.timeLimit(.minutes(3)))
    func fifthNormalAlertWithinAMinuteIsRateLimited() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let start = monotonicMicroseconds()
            for index in 0..<4 {
                let path = try await f.present([Keys.text.name: .string("alert \(index)")])
                try await f.call(Alert.cancel, path: path)
            }
            // The first of the four leaves the window 60 s after it was accepted.
            let tryAgain = try await AlertRejectionTests.ruleHolds(f, [Keys.text.name: .string("fifth")], on: f.client,
                                                                   reason: "rate-limited", completions: completions)
            let sinceStart = Double(monotonicMicroseconds() - start) / 1000
            #expect(Double(tryAgain) <= 60_000 && Double(tryAgain) > 60_000 - sinceStart - AlertRejectionTests.tolerance)
        }
    }
}
