import CaptureCore
import ContractCore
import Testing

/// The alert service's `PlayedAudio` stream as capture reads it: the header however the
/// bytes are split, the samples, refusals, and where the first frame goes.
@Suite struct PlayedReferenceTests {
    static let samples: [Int16] = [0, 16384, -16384, 32767, -32768, 1, -1]

    @Test func aStreamReadInAnyPiecesGivesItsSamples() throws {
        let stream = PCMWave.streamHeader(sampleRate: 22050, channels: 1, bitsPerSample: 16) + PCMWave.bytes(Self.samples)
        for piece in [1, 3, 44, 45, stream.count] {
            var reference = PlayedReference()
            var got: [Float] = []
            for start in stride(from: 0, to: stream.count, by: piece) {
                got += try reference.take(Array(stream[start ..< min(stream.count, start + piece)]))
            }
            #expect(reference.format == PlayedReference.Format(sampleRate: 22050, channels: 1))
            #expect(got == Self.samples.map { Float($0) / 32768 }, "in pieces of \(piece)")
        }
    }

    @Test func stereoIsAveraged() throws {
        var reference = PlayedReference()
        let stream = PCMWave.streamHeader(sampleRate: 16000, channels: 2, bitsPerSample: 16) + PCMWave.bytes([16384, 0, -16384, -16384])
        #expect(try reference.take(stream) == [0.25, -0.5])
    }

    @Test func whatIsNotAWaveStreamIsRefused() throws {
        var garbage = PlayedReference()
        #expect(throws: PlayedReference.Malformed.self) { try garbage.take([UInt8](repeating: 7, count: 44)) }
        var eightBit = PlayedReference()
        #expect(throws: PlayedReference.Malformed.self) {
            try eightBit.take(PCMWave.streamHeader(sampleRate: 16000, channels: 1, bitsPerSample: 8))
        }
        var short = PlayedReference()
        #expect(try short.take(Array(PCMWave.streamHeader(sampleRate: 16000, channels: 1, bitsPerSample: 16).prefix(43))) == [])
        #expect(short.format == nil)
    }

    /// The first read of 1600 frames came back at 1 s: the microphone's sample 0 was taken
    /// at 0.9 s (16 kHz), so a frame out at 0.95 s is sample 800, one at 0.85 s is before it.
    @Test func theFirstFrameIsPlacedByTheFirstRead() {
        let at = { (startedUs: UInt64) in
            PlayedReference.startSample(startedUs: startedUs, firstReadUs: 1_000_000, firstReadFrames: 1600, rate: 16000)
        }
        #expect(at(950_000) == 800)
        #expect(at(1_000_000) == 1600)
        #expect(at(1_100_000) == 3200)
        #expect(at(850_000) == -800)
    }
}
