@testable import EarshotMedia
import EarshotSync
import Foundation
import Testing

/// The true peak `AudioAnalyzer` measures with its own interpolator, checked against libebur128's
/// own (`EBUR128_MODE_TRUE_PEAK`) and, where the signal's peak is known, against that; its
/// loudness checked against libebur128's measurement alongside the true peak.
@Suite struct TruePeakTests {
    let directory = TestDirectory()

    /// A test file: its channels (each a list of samples) and how it is stored.
    struct Case: CustomStringConvertible {
        let name: String
        let sampleRate: Int
        let channels: [[Float]]
        var encoding: WaveFile.Encoding = .float32
        /// The signal's true peak in dBTP, when known exactly.
        var knownPeakDbtp: Double?

        var description: String { "\(name) at \(sampleRate) Hz" }
    }

    static func cases(sampleRate rate: Int) -> [Case] {
        let seconds = 3.0
        let quarter = Double(rate) / 4
        return [
            Case(name: "997 Hz sine", sampleRate: rate,
                 channels: [Tone.sine(frequency: 997, amplitude: 0.5, seconds: seconds, sampleRate: rate)],
                 knownPeakDbtp: 20 * log10(0.5)),
            Case(name: "5 kHz sine", sampleRate: rate,
                 channels: [Tone.sine(frequency: 5000, amplitude: 0.7, phase: 0.3, seconds: seconds, sampleRate: rate)],
                 knownPeakDbtp: 20 * log10(0.7)),
            // Sampled at ±45° from its crests, the samples peak 3 dB below the wave.
            Case(name: "fs/4 sine at 45°", sampleRate: rate,
                 channels: [Tone.sine(frequency: quarter, amplitude: 0.5, phase: .pi / 4, seconds: seconds, sampleRate: rate)],
                 knownPeakDbtp: 20 * log10(0.5)),
            Case(name: "fs/4 sine at 45°, abrupt edges", sampleRate: rate,
                 channels: [Tone.sine(frequency: quarter, amplitude: 0.5, phase: .pi / 4, seconds: seconds,
                                      sampleRate: rate, fade: false)],
                 encoding: .pcm16),
            Case(name: "white noise", sampleRate: rate,
                 channels: [Tone.noise(amplitude: 0.5, seconds: seconds, sampleRate: rate, seed: 1)]),
            Case(name: "stereo: 997 Hz sine and fs/4 sine at 45°", sampleRate: rate,
                 channels: [Tone.sine(frequency: 997, amplitude: 0.25, seconds: seconds, sampleRate: rate),
                            Tone.sine(frequency: quarter, amplitude: 0.4, phase: .pi / 4, seconds: seconds, sampleRate: rate)],
                 encoding: .pcm16, knownPeakDbtp: 20 * log10(0.4)),
            Case(name: "stereo white noise", sampleRate: rate,
                 channels: [Tone.noise(amplitude: 0.3, seconds: seconds, sampleRate: rate, seed: 2),
                            Tone.noise(amplitude: 0.6, seconds: seconds, sampleRate: rate, seed: 3)],
                 encoding: .pcm16),
        ]
    }

    /// 4× oversampling below 96 kHz, 2× at 96 kHz, none (the sample peak) at 192 kHz, as
    /// libebur128 does.
    @Test(arguments: [44100, 48000, 96000, 192_000])
    func agreesWithLibebur128(sampleRate: Int) throws {
        for testCase in Self.cases(sampleRate: sampleRate) {
            let samples = Tone.interleave(testCase.channels)
            let path = directory.write("case.wav", WaveFile.bytes(samples, channels: testCase.channels.count,
                                                                  sampleRate: sampleRate, encoding: testCase.encoding))
            let analysis = try AudioAnalyzer.analyze(path: path)
            let reference = try AudioAnalyzer.referenceMeasurement(path: path)
            let deviation = analysis.truePeakDbtp - reference.truePeakDbtp
            print("true peak of \(testCase): \(analysis.truePeakDbtp) dBTP, libebur128 \(reference.truePeakDbtp) dBTP, "
                  + "deviation \(deviation) dB")
            #expect(abs(deviation) <= 0.2, "\(testCase): \(analysis.truePeakDbtp) vs libebur128 \(reference.truePeakDbtp)")
            #expect(abs(analysis.loudnessLufs - reference.loudnessLufs) <= 0.01,
                    "\(testCase): \(analysis.loudnessLufs) LUFS vs libebur128 \(reference.loudnessLufs) LUFS")
            if sampleRate < 192_000, let known = testCase.knownPeakDbtp {
                #expect(abs(analysis.truePeakDbtp - known) <= 0.05, "\(testCase): \(analysis.truePeakDbtp) vs \(known)")
            }
            if sampleRate >= 192_000 {
                // Not oversampled: the sample peak.
                let samplePeak = 20 * log10(Double(samples.map(abs).max()!))
                #expect(abs(analysis.truePeakDbtp - samplePeak) < 0.001, "\(testCase): \(analysis.truePeakDbtp) vs \(samplePeak)")
            }
        }
    }

    /// The sine at a quarter of the rate, sampled off its crests, peaks 3 dB above its samples:
    /// the true peak sees the wave, not the samples.
    @Test func findsThePeakBetweenSamples() throws {
        let samples = Tone.sine(frequency: 12000, amplitude: 0.5, phase: .pi / 4, seconds: 2, sampleRate: 48000)
        let samplePeak = 20 * log10(Double(samples.map(abs).max()!))
        let path = directory.write("quarter.wav", WaveFile.bytes(samples, channels: 1, sampleRate: 48000, encoding: .float32))
        let analysis = try AudioAnalyzer.analyze(path: path)
        #expect(abs(samplePeak - (20 * log10(0.5) - 3.01)) < 0.01)
        #expect(abs(analysis.truePeakDbtp - 20 * log10(0.5)) < 0.05, "\(analysis.truePeakDbtp) dBTP")
    }

    /// Chunks much longer than one relay chunk, decoded on one thread and measured on two,
    /// measure exactly what one thread measures chunk by chunk.
    @Test func concurrentAndSequentialMeasurementsAreEqual() throws {
        let rate = 48000
        let left = Tone.noise(amplitude: 0.4, seconds: 10, sampleRate: rate, seed: 4)
        let right = Tone.sine(frequency: 1234, amplitude: 0.6, phase: 1, seconds: 10, sampleRate: rate)
        let wave = directory.write("long.wav", WaveFile.bytes(Tone.interleave([left, right]), channels: 2, sampleRate: rate))
        let flac = directory.file("long.flac")
        try ExternalTools.ffmpeg(["-i", wave, flac])
        for path in [wave, flac] {
            let concurrent = try AudioAnalyzer.analyze(path: path)
            let sequential = try AudioAnalyzer.analyze(path: path, concurrently: false)
            #expect(concurrent == sequential)
            #expect(concurrent.frames == 480_000)
            #expect(concurrent.frames > UInt64(ChunkRelay.chunkFrames * ChunkRelay.bufferCount))
        }
    }

    /// Where the stream is cut into calls makes no difference to the meter.
    @Test func meterIgnoresHowTheStreamIsCut() throws {
        let rate = 44100
        let samples = Tone.interleave([Tone.noise(amplitude: 0.5, seconds: 1, sampleRate: rate, seed: 5),
                                       Tone.sine(frequency: 11025, amplitude: 0.3, phase: 0.5, seconds: 1, sampleRate: rate)])
        func measure(cuts: [Int]) throws -> Double {
            let meter = try TruePeakMeter(channels: 2, sampleRate: UInt32(rate))
            try samples.withUnsafeBufferPointer { (all) throws(MediaError) in
                var frame = 0
                var cut = 0
                while frame < samples.count / 2 {
                    let frames = min(cuts[cut % cuts.count], samples.count / 2 - frame)
                    try meter.add(UnsafeBufferPointer(rebasing: all[frame * 2 ..< (frame + frames) * 2]), frames: frames)
                    frame += frames
                    cut += 1
                }
            }
            try meter.finish()
            return meter.truePeakDbtp
        }
        let whole = try measure(cuts: [samples.count / 2])
        #expect(try measure(cuts: [1, 7, 4095, 4097, 8192, 3]) == whole)
        #expect(try measure(cuts: [16_384]) == whole)
    }

    @Test func meterOfSilenceAndOfNaN() throws {
        let silent = try TruePeakMeter(channels: 3, sampleRate: 8000)
        try [Float](repeating: 0, count: 3 * 8000).withUnsafeBufferPointer { (samples) throws(MediaError) in
            try silent.add(samples, frames: 8000)
        }
        try silent.finish()
        #expect(silent.truePeakDbtp == -.infinity)

        // NaN samples (a float WAV may hold them) are not peaks.
        let meter = try TruePeakMeter(channels: 1, sampleRate: 44100)
        var samples = Tone.sine(frequency: 440, amplitude: 0.25, seconds: 0.5, sampleRate: 44100)
        samples[1000] = .nan
        try samples.withUnsafeBufferPointer { (samples) throws(MediaError) in
            try meter.add(samples, frames: samples.count)
        }
        try meter.finish()
        #expect(meter.truePeakDbtp.isFinite)
        #expect(abs(meter.truePeakDbtp - 20 * log10(0.25)) < 0.05, "\(meter.truePeakDbtp)")
    }

    @Test func meterRefusesWhatItCannotMeasure() {
        let error = mediaError { () throws(MediaError) in _ = try TruePeakMeter(channels: 9, sampleRate: 44100) }
        #expect(error?.kind == .invalidAudio, "\(String(describing: error))")
    }
}

/// The relay between the decoding thread and the true-peak thread.
@Suite struct ChunkRelayTests {
    /// Every chunk arrives, in order, with what was written into it, while at most
    /// `bufferCount` buffers exist.
    @Test func deliversEveryChunkInOrder() throws {
        let relay = ChunkRelay(channels: 2)
        // The consumer reports how many chunks came in order, each whole (every sample holds
        // the chunk's number, and its frame count is the one written).
        guard let consumer = JoinableThread(name: "test-consumer", {
            var expected = 0
            while let chunk = relay.next() {
                let samples = relay.samples(chunk.buffer, frames: chunk.frames)
                let whole = chunk.frames == Self.frames(of: expected) && samples.allSatisfy { $0 == Float(expected) }
                relay.release(chunk.buffer)
                guard whole else {
                    relay.report(.failure(MediaError(kind: .io, message: "chunk \(expected) is wrong")))
                    return
                }
                expected += 1
            }
            relay.report(.success(Double(expected)))
        }) else {
            Issue.record("cannot start a thread")
            return
        }
        for number in 0 ..< 50 {
            let index = try #require(relay.acquire())
            let frames = Self.frames(of: number)
            let buffer = relay.buffer(index)
            for sample in 0 ..< frames * 2 { buffer[sample] = Float(number) }
            relay.publish(index, frames: frames)
            relay.release(index)
        }
        relay.end()
        consumer.join()
        let outcome = try #require(relay.truePeakOutcome)
        #expect(try outcome.get() == 50)
    }

    /// The frame count of chunk `number` in `deliversEveryChunkInOrder`.
    private static func frames(of number: Int) -> Int { 1 + number * 997 % ChunkRelay.chunkFrames }

    /// Once the true-peak thread fails, the decoding thread gets no more buffers.
    @Test func stopsDecodingWhenTheTruePeakFails() throws {
        let relay = ChunkRelay(channels: 1)
        // Fill every buffer, so the decoding thread would have to wait for the other.
        for _ in 0 ..< ChunkRelay.bufferCount {
            let index = try #require(relay.acquire())
            relay.publish(index, frames: 10)
            relay.release(index)
        }
        let failure = MediaError(kind: .io, message: "injected")
        guard let consumer = JoinableThread(name: "test-consumer", {
            if let chunk = relay.next() { relay.release(chunk.buffer) }
            relay.report(.failure(failure))
        }) else {
            Issue.record("cannot start a thread")
            return
        }
        // Waits until the failure, which leaves no buffer to decode into.
        while relay.acquire() != nil {}
        consumer.join()
        #expect(relay.acquire() == nil)
        if case .failure(let reported) = relay.truePeakOutcome {
            #expect(reported == failure)
        } else {
            Issue.record("no failure reported")
        }
    }

    /// After `cancel`, the true-peak thread takes no more chunks, even queued ones.
    @Test func cancelStopsTheTruePeakThread() throws {
        let relay = ChunkRelay(channels: 1)
        let index = try #require(relay.acquire())
        relay.publish(index, frames: 10)
        relay.release(index)
        relay.cancel()
        #expect(relay.next() == nil)
    }
}

/// Test signals as lists of samples, one list per channel.
enum Tone {
    /// A sine, with 10 ms raised-cosine fades in and out unless `fade` is false.
    static func sine(frequency: Double, amplitude: Double, phase: Double = 0, seconds: Double, sampleRate: Int,
                     fade: Bool = true) -> [Float] {
        let frames = Int((seconds * Double(sampleRate)).rounded())
        let fadeFrames = fade ? sampleRate / 100 : 0
        return (0 ..< frames).map { frame in
            var gain = 1.0
            let edge = min(frame, frames - 1 - frame)
            if edge < fadeFrames { gain = 0.5 - 0.5 * cos(Double.pi * Double(edge) / Double(fadeFrames)) }
            return Float(gain * amplitude * sin(2 * Double.pi * frequency * Double(frame) / Double(sampleRate) + phase))
        }
    }

    /// Uniform white noise in ±`amplitude`, the same for the same seed.
    static func noise(amplitude: Double, seconds: Double, sampleRate: Int, seed: UInt64) -> [Float] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        let frames = Int((seconds * Double(sampleRate)).rounded())
        return (0 ..< frames).map { _ in
            // xorshift64*
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            let unit = Double((state &* 0x2545_F491_4F6C_DD1D) >> 11) / Double(1 << 53)
            return Float(amplitude * (2 * unit - 1))
        }
    }

    /// The channels' samples, frame by frame.
    static func interleave(_ channels: [[Float]]) -> [Float] {
        var samples: [Float] = []
        samples.reserveCapacity(channels.count * channels[0].count)
        for frame in channels[0].indices {
            for channel in channels { samples.append(channel[frame]) }
        }
        return samples
    }
}
