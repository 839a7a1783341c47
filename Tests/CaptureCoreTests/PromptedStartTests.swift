import CaptureCore
import Testing

@Suite struct PromptedStartTests {
    /// 1.5 s at 16 kHz in 100 ms periods, after a prompt that ends at 10 s.
    static let promptEndUs: UInt64 = 10_000_000
    static func end(startingAt startUs: UInt64) -> UInt64 {
        CapturePeriod.endUs(startUs: startUs, maxFrames: 24000, periodFrames: 1600, rate: 16000)
    }

    @Test func theToldEndIsNeverEarlyAndLateByAtMostHalfTheAllowance() {
        let told = PromptedStart.endUs(promptEndUs: Self.promptEndUs, maxFrames: 24000, periodFrames: 1600, rate: 16000)
        #expect(told == Self.promptEndUs + 100_000 + 1_500_000)
        let earliest = PromptedStart.earliestStartUs(promptEndUs: Self.promptEndUs)
        #expect(earliest == Self.promptEndUs + 50_000)
        // Ready at once, after 20 ms, at the hold, or at the whole allowance.
        for readyAfterUs: UInt64 in [0, 20_000, 50_000, 80_000, 100_000] {
            let start = max(Self.promptEndUs + readyAfterUs, earliest)
            let actual = Self.end(startingAt: start)
            #expect(actual <= told, "ready after \(readyAfterUs) µs")
            #expect(told - actual <= PromptedStart.allowanceUs - PromptedStart.delayUs, "ready after \(readyAfterUs) µs")
        }
    }

    @Test func aPeriodThatDoesNotDivideMaxDurationEndsAtItsLastRead() {
        // 1.05 s in 100 ms periods: eleven reads.
        #expect(PromptedStart.endUs(promptEndUs: 0, maxFrames: 16800, periodFrames: 1600, rate: 16000) == 100_000 + 1_100_000)
    }
}
