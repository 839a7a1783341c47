import CaptureCore
import Testing

@Suite struct CapturePeriodTests {
    static func request(rate: UInt32 = 16000, chunkMs: UInt32, endOnSilenceMs: UInt32 = 0) -> PassThruRequest {
        var request = PassThruRequest(samplingRate: rate, bitsPerSample: 16, maxDurationMs: 10_000)
        request.chunkMs = chunkMs
        request.endOnSilenceMs = endOnSilenceMs
        return request
    }

    @Test func theEndByMaxDurationIsAtTheEndOfItsLastPeriod() {
        // 1 s at 16 kHz in periods of 1600 frames: ten whole periods.
        #expect(CapturePeriod.endUs(startUs: 5_000_000, maxFrames: 16000, periodFrames: 1600, rate: 16000) == 6_000_000)
        // 1.05 s: the last frame is in the eleventh period, read at 1.1 s.
        #expect(CapturePeriod.endUs(startUs: 0, maxFrames: 16800, periodFrames: 1600, rate: 16000) == 1_100_000)
        #expect(CapturePeriod.endUs(startUs: 0, maxFrames: 1, periodFrames: 0, rate: 8000) == 125)
    }

    @Test(arguments: [(UInt32(10), UInt32(160)), (100, 1600), (250, 4000), (1000, 16000)])
    func onePeriodPerChunk(chunkMs: UInt32, frames: UInt32) {
        #expect(CapturePeriod.frames(for: Self.request(chunkMs: chunkMs)) == frames)
    }

    @Test func fractionalChunksRoundDown() {
        // 22050 Hz × 10 ms = 220.5 frames.
        #expect(CapturePeriod.frames(for: Self.request(rate: 22050, chunkMs: 10)) == 220)
        #expect(CapturePeriod.frames(for: Self.request(rate: 22050, chunkMs: 1000)) == 22050)
    }

    @Test func silenceDetectionKeepsPeriodsShort() {
        #expect(CapturePeriod.frames(for: Self.request(chunkMs: 1000, endOnSilenceMs: 500)) == 1600)
        #expect(CapturePeriod.frames(for: Self.request(rate: 48000, chunkMs: 500, endOnSilenceMs: 1)) == 4800)
        // Shorter chunks stay as they are.
        #expect(CapturePeriod.frames(for: Self.request(chunkMs: 20, endOnSilenceMs: 500)) == 320)
    }

    @Test func theSessionsBufferDurationBoundsThePeriod() {
        #expect(CapturePeriod.frames(for: Self.request(chunkMs: 1000), sessionLimitSeconds: 0.005) == 80)
        #expect(CapturePeriod.frames(for: Self.request(chunkMs: 10), sessionLimitSeconds: 0.5) == 160)
        #expect(CapturePeriod.frames(for: Self.request(chunkMs: 100), sessionLimitSeconds: 0) == 1600)
        #expect(CapturePeriod.frames(for: Self.request(chunkMs: 100), sessionLimitSeconds: 1e-9) == 1)
    }

    @Test func theUsersEndsAndAnInterruptionKeepHeardAudio() {
        #expect(EndReason.allCases.filter(\.keepsHeardAudio) == [.done, .end, .cancel, .retry, .interrupted])
    }
}
