import CaptureCore
import Testing

/// Where a far end read beside the microphone goes: from the microphone's sample taken as
/// its first went out, later by `laterBy`; what went out before the microphone's first
/// sample is dropped, however it is split over reads.
@Suite struct FarEndPlacementTests {
    /// A microphone whose first read of 1600 frames at 16 kHz came back at 1 s: its first
    /// sample was taken at 0.9 s.
    static let (firstReadUs, firstReadFrames, rate): (UInt64, Int, Int) = (1_000_000, 1600, 16000)

    func place(_ placement: inout FarEndPlacement, _ pending: inout [Float], startedUs: UInt64) -> (samples: [Float], startedAt: Int?)? {
        placement.place(&pending, startedUs: startedUs, firstReadUs: Self.firstReadUs, firstReadFrames: Self.firstReadFrames, rate: Self.rate)
    }

    @Test func aFarEndThatStartedAfterTheMicrophoneIsPlacedWhereItStarted() throws {
        var placement = FarEndPlacement(laterBy: 640)
        var pending: [Float] = [1, 2, 3]
        // Started at 0.95 s: the microphone's sample 800, and 640 later (40 ms).
        let first = try #require(place(&placement, &pending, startedUs: 950_000))
        #expect(first.samples == [1, 2, 3] && first.startedAt == 1440 && pending.isEmpty && placement.placed)
        pending = [4, 5]
        let next = try #require(place(&placement, &pending, startedUs: 950_000))
        #expect(next.samples == [4, 5] && next.startedAt == nil && pending.isEmpty)
    }

    @Test func whatWentOutBeforeTheMicrophoneIsDroppedOverSeveralReads() throws {
        var placement = FarEndPlacement()
        // Started at 0.85 s: 800 samples before the microphone's first.
        var pending = [Float](repeating: 0, count: 500)
        #expect(place(&placement, &pending, startedUs: 850_000) == nil)
        #expect(pending.isEmpty && !placement.placed && placement.startSample == -800)
        pending = [Float](repeating: 0, count: 300) + [7, 8]
        let first = try #require(place(&placement, &pending, startedUs: 850_000))
        #expect(first.samples == [7, 8] && first.startedAt == 0)
    }

    @Test func atMostSoManyAreHandedOverAtATimeAndTheRestWait() throws {
        var placement = FarEndPlacement()
        var pending: [Float] = [1, 2, 3, 4, 5]
        let first = try #require(placement.place(&pending, startedUs: 950_000, firstReadUs: Self.firstReadUs,
                                                 firstReadFrames: Self.firstReadFrames, rate: Self.rate, atMost: 2))
        #expect(first.samples == [1, 2] && first.startedAt == 800 && pending == [3, 4, 5])
        let next = try #require(placement.place(&pending, startedUs: 950_000, firstReadUs: Self.firstReadUs,
                                                firstReadFrames: Self.firstReadFrames, rate: Self.rate, atMost: 2))
        #expect(next.samples == [3, 4] && next.startedAt == nil && pending == [5])
    }

    @Test func nothingIsHandedOverBeforeThereIsSomething() {
        var placement = FarEndPlacement()
        var pending: [Float] = []
        #expect(place(&placement, &pending, startedUs: 950_000) == nil)
        #expect(!placement.placed && placement.startSample == 800)
    }
}
