import Glibc
import Testing
@testable import EarshotVoice

@Suite("Audio files through libsndfile and libsamplerate")
struct AudioFileDecoderTests {
    /// One second of 440 Hz at 44100 Hz in stereo: the left channel at 0.6, the right at
    /// 0.2, so the mono average is a 0.4 sine.
    private func stereoSine(_ files: TestFiles) -> String {
        var samples: [Float] = []
        for frame in 0 ..< 44100 {
            let value = Float(sin(2 * Double.pi * 440 * Double(frame) / 44100))
            samples += [0.6 * value, 0.2 * value]
        }
        return files.writeWAV("sine.wav", samples: samples, channels: 2, sampleRate: 44100)
    }

    @Test func wavIsDownmixedAndResampled() throws {
        let files = TestFiles()
        defer { files.remove() }
        let path = stereoSine(files)
        let samples = try AudioFileDecoder.decode(path: path, sampleRate: 22050)
        #expect(samples.count == 22050)
        // A 0.4 sine has an RMS of 0.4/√2 ≈ 0.283; its peak is 0.4.
        let rms = AudioMeasures.rms(Array(samples[100 ..< 21950]))
        #expect(abs(rms - 0.2828) < 0.01, "rms \(rms)")
        #expect(abs(AudioMeasures.peak(samples) - 0.4) < 0.02)
        let crossings = AudioMeasures.upwardZeroCrossings(samples)
        #expect(abs(crossings - 440) <= 2, "\(crossings) crossings")
        // Compared with the ideal 0.4 sine at 22050 Hz, sample by sample.
        var error = 0.0
        for frame in 100 ..< 21950 {
            let ideal = 0.4 * sin(2 * Double.pi * 440 * Double(frame) / 22050)
            error = max(error, abs(Double(samples[frame]) / 32768 - ideal))
        }
        #expect(error < 0.01, "largest deviation \(error)")
    }

    @Test func sameRateIsNotResampled() throws {
        let files = TestFiles()
        defer { files.remove() }
        let path = files.writeWAV("ramp.wav", samples: (0 ..< 1000).map { Float($0) / 2000 }, channels: 1, sampleRate: 22050)
        let samples = try AudioFileDecoder.decode(path: path, sampleRate: 22050)
        #expect(samples.count == 1000)
        #expect(abs(Int(samples[500]) - 8192) <= 1)
    }

    @Test func missingFileIsNotFound() {
        #expect(throws: AudioFileError.notFound(path: "/nonexistent/earshot/alert.wav")) {
            try AudioFileDecoder.decode(path: "/nonexistent/earshot/alert.wav", sampleRate: 22050)
        }
    }

    @Test func garbageIsUnreadable() {
        let files = TestFiles()
        defer { files.remove() }
        let path = files.writeBytes("garbage.wav", Array("this is not audio at all, just some text".utf8))
        do {
            _ = try AudioFileDecoder.decode(path: path, sampleRate: 22050)
            Issue.record("decoding text succeeded")
        } catch {
            guard case .unreadable(let failed, let message) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(failed == path)
            #expect(!message.isEmpty)
        }
        #expect(throws: AudioFileError.self) { try AudioFileDecoder.decode(path: files.directory, sampleRate: 22050) }
    }

    @Test func resamplerLengthsAreExact() throws {
        let input = [Int16](repeating: 1000, count: 12345)
        for (from, to) in [(22050, 16000), (22050, 48000), (44100, 22050), (8000, 22050)] {
            let output = try Resampler.resample(input, from: from, to: to)
            #expect(output.count == Resampler.convertedLength(12345, from: from, to: to))
            // A constant stays constant away from the edges.
            #expect(abs(Int(output[output.count / 2]) - 1000) <= 5, "\(from) → \(to): \(output[output.count / 2])")
        }
    }

    /// A stream resampled in uneven pieces is the same signal as resampled whole: no seam
    /// where the pieces join, the same length once flushed, a tone kept at its level.
    @Test func aStreamResampledInPiecesHasNoSeams() throws {
        let from = 22050, to = 16000
        let input = (0 ..< from).map { Float(sin(2 * Double.pi * 440 * Double($0) / Double(from))) * 0.5 }
        let whole = try Resampler.resample(input, from: from, to: to)
        let stream = try StreamingResampler(from: from, to: to)
        var pieces: [Float] = []
        var offset = 0
        for size in [1, 7, 300, 2048, 5, 4000].cycled(until: input.count) {
            let end = min(input.count, offset + size)
            pieces += try stream.process(Array(input[offset ..< end]))
            offset = end
            if offset == input.count { break }
        }
        pieces += try stream.process([], last: true)
        #expect(abs(pieces.count - whole.count) <= 2, "\(pieces.count) samples in pieces, \(whole.count) whole")
        // Away from the edges both are the tone, sample for sample.
        let worst = (1000 ..< whole.count - 1000).map { abs(pieces[$0] - whole[$0]) }.max() ?? 1
        #expect(worst < 0.01, "pieces and whole differ by \(worst)")
        #expect(try stream.process(input).isEmpty, "nothing after the last piece")
        // The same rate passes samples through.
        #expect(try StreamingResampler(from: to, to: to).process(Array(input[0 ..< 10])) == Array(input[0 ..< 10]))
    }
}

private extension Array where Element == Int {
    /// The sizes over and over, as many as it takes to cover `total`.
    func cycled(until total: Int) -> [Int] {
        var sizes: [Int] = []
        var sum = 0
        while sum < total {
            for size in self where sum < total {
                sizes.append(size)
                sum += size
            }
        }
        return sizes
    }
}
