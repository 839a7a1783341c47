import EarshotCabinSound
import Testing

/// The echo benchmark's arithmetic for pass-thrus that end on silence: where each ended
/// against the driver's last word.
@Suite struct SilenceEndingsTests {
    let rate = 16000

    @Test func anEndingIsEarlyOnTimeLateOrNever() {
        var endings = SilenceEndings()
        let driverEnd = 3 * rate
        // Ended at a pause before the driver finished.
        endings.add(end: driverEnd - rate / 10, driverEnd: driverEnd, endOnSilenceMs: 500, rate: rate)
        // 500 ms of quiet after the last word, then 120 ms to notice it.
        endings.add(end: driverEnd + rate * 620 / 1000, driverEnd: driverEnd, endOnSilenceMs: 500, rate: rate)
        // Exactly the allowance past: still on time.
        endings.add(end: driverEnd + rate * 800 / 1000, driverEnd: driverEnd, endOnSilenceMs: 500, rate: rate)
        // Held open by the far end's echo for a second past it.
        endings.add(end: driverEnd + rate * 1500 / 1000, driverEnd: driverEnd, endOnSilenceMs: 500, rate: rate)
        endings.add(end: nil, driverEnd: driverEnd, endOnSilenceMs: 500, rate: rate)
        #expect(endings.early == 1)
        #expect(endings.onTime == 2)
        #expect(endings.late == 1)
        #expect(endings.never == 1)
        #expect(endings.scenes == 5)
        #expect(endings.pastSilenceMs == [120, 300, 1000])
        #expect(endings.medianPastSilenceMs == 300)
        #expect(endings.worstPastSilenceMs == 1000)
        #expect(!endings.allOnTime)
    }

    @Test func theDriversOwnTrailingQuietCountsTowardsTheSilence() {
        var endings = SilenceEndings()
        // The span ends with 80 ms of the voice's own quiet: the ending comes 420 ms after it.
        endings.add(end: rate + rate * 420 / 1000, driverEnd: rate, endOnSilenceMs: 500, rate: rate)
        #expect(endings.onTime == 1)
        #expect(endings.pastSilenceMs == [-80])
        #expect(endings.allOnTime)
    }

    @Test func noSceneIsNotAllOnTime() {
        #expect(!SilenceEndings().allOnTime)
        #expect(SilenceEndings().medianPastSilenceMs == nil)
    }
}
