import ContractCore
import EarshotTestHarness
import EarshotVoice
import Foundation

/// A car's sound, made for tests and benchmarks: speech from espeak-ng, the prompt as
/// Earshot renders it, a cabin's echo path, road noise, music; and the measures taken on
/// it. Mono float samples in [-1, 1] at `rate`.
public enum CabinSound {
    public static let rate = 16000

    /// `text` spoken by espeak-ng with `voice`, at `rate`, as floats.
    public static func speech(_ text: String, voice: String = "en-us") throws -> [Float] {
        let synthesizer = try SpeechSynthesizer(voice: voice)
        let samples = try synthesizer.synthesize(text: text, phonemes: false).map { Float($0) / 32768 }
        return try Resampler.resample(samples, from: synthesizer.sampleRate, to: rate)
    }

    /// The prompt as Earshot renders it (AlertAudioRenderer, as the alert service does).
    public static func prompt(_ text: String) throws -> [Float] {
        let renderer = AlertAudioRenderer(sampleRate: rate)
        return try renderer.render(SpeechChunk(kind: .text, text: text)).map { Float($0) / 32768 }
    }

    /// Three plucked notes with a slow tremolo, `seconds` long: music on the radio.
    public static func music(seconds: Double) -> [Float] {
        let count = Int(seconds * Double(rate))
        let notes: [Double] = [130.81, 164.81, 196.0, 261.63]
        return (0 ..< count).map { index in
            let time = Double(index) / Double(rate)
            let beat = time.truncatingRemainder(dividingBy: 0.5)
            var value = 0.0
            for (number, frequency) in notes.enumerated() {
                let shifted = (time + Double(number) * 0.125).truncatingRemainder(dividingBy: 0.5)
                for harmonic in 1 ... 4 {
                    value += sin(2 * .pi * frequency * Double(harmonic) * time) * exp(-6 * shifted) / Double(harmonic * harmonic)
                }
            }
            return Float(0.12 * value * (0.8 + 0.2 * sin(2 * .pi * 3 * time)) * (0.9 + 0.1 * exp(-4 * beat)))
        }
    }

    /// A cabin's echo path: `delayMs` of flight, a direct path, then decaying noise
    /// (a 40 ms time constant, `tailMs` long), scaled to unit energy.
    public static func room(delayMs: Int, tailMs: Int = 150, seed: UInt64 = 7) -> [Float] {
        var generator = SeededGenerator(seed: seed)
        let delay = rate * delayMs / 1000
        var response = [Float](repeating: 0, count: delay + rate * tailMs / 1000)
        for index in delay ..< response.count {
            let gaussian = (0 ..< 4).map { _ in Float.random(in: -1 ... 1, using: &generator) }.reduce(0, +)
            response[index] = gaussian * Float(exp(-Double(index - delay) / (0.040 * Double(rate))))
        }
        response[delay] = 1.5
        let energy = response.reduce(0) { $0 + $1 * $1 }
        return response.map { $0 / energy.squareRoot() }
    }

    /// `signal` through `response`, as long as `signal`.
    public static func convolve(_ signal: [Float], _ response: [Float]) -> [Float] {
        var output = [Float](repeating: 0, count: signal.count)
        signal.withUnsafeBufferPointer { x in
            response.withUnsafeBufferPointer { h in
                output.withUnsafeMutableBufferPointer { y in
                    for i in 0 ..< x.count where x[i] != 0 {
                        let value = x[i]
                        for j in 0 ..< min(h.count, y.count - i) { y[i + j] += value * h[j] }
                    }
                }
            }
        }
        return output
    }

    /// Brown noise (integrated white noise, leaky so that it stays bounded), `count` samples
    /// with an RMS of `rms`: road noise, loudest at low frequencies.
    public static func brownNoise(count: Int, rms: Float, seed: UInt64 = 11) -> [Float] {
        var generator = SeededGenerator(seed: seed)
        var level: Float = 0
        let raw = (0 ..< count).map { _ -> Float in
            level = 0.998 * level + Float.random(in: -1 ... 1, using: &generator) * 0.05
            return level
        }
        return scaled(raw, toRMS: rms)
    }

    public static func scaled(_ signal: [Float], toRMS target: Float) -> [Float] {
        let current = rms(signal, 0 ..< signal.count)
        return signal.map { $0 * target / max(current, 1e-9) }
    }

    /// `signal` padded or cut to `count`, starting at `offset`.
    public static func placed(_ signal: [Float], at offset: Int, count: Int) -> [Float] {
        var output = [Float](repeating: 0, count: count)
        for index in signal.indices where offset + index < count { output[offset + index] = signal[index] }
        return output
    }

    public static func sum(_ signals: [Float]...) -> [Float] {
        (0 ..< signals[0].count).map { index in signals.reduce(0) { $0 + $1[index] } }
    }

    public static func energy(_ signal: [Float], _ range: Range<Int>) -> Double {
        range.clamped(to: 0 ..< signal.count).reduce(1e-12) { $0 + Double(signal[$1]) * Double(signal[$1]) }
    }

    public static func rms(_ signal: [Float], _ range: Range<Int>) -> Float {
        Float((energy(signal, range) / Double(max(1, range.count))).squareRoot())
    }

    public static func decibels(_ ratio: Double) -> Double { 10 * log10(ratio) }

    /// `voice` spoken `start` samples into a microphone that also hears brown road noise
    /// at `snrDb` below the voice: the voice alone (as long as the microphone), the
    /// microphone, and where the voice speaks. Half a second of noise follows the voice.
    public static func voiceInRoadNoise(_ voice: [Float], at start: Int, snrDb: Double = 5, seed: UInt64 = 11)
        -> (driver: [Float], microphone: [Float], speaking: Range<Int>) {
        let count = whole(start + voice.count + rate / 2)
        let driver = placed(scaled(voice, toRMS: 0.08), at: start, count: count)
        let speaking = start ..< start + voice.count
        let noise = brownNoise(count: count, rms: rms(driver, speaking) / Float(pow(10, snrDb / 20)), seed: seed)
        return (driver, sum(driver, noise), speaking)
    }

    /// The SNR (dB) of `signal`: its power where the voice speaks, less the noise's, over
    /// its power in `quiet` (noise alone).
    public static func snr(_ signal: [Float], speaking: Range<Int>, quiet: Range<Int>) -> Double {
        let speech = energy(signal, speaking) / Double(speaking.count), noise = energy(signal, quiet) / Double(quiet.count)
        return decibels((speech - noise) / noise)
    }

    /// The voice's level (dB) in `output` against `driver` alone: the output's power where
    /// the voice speaks, less its power in `quiet`.
    public static func voiceLevel(_ output: [Float], of driver: [Float], speaking: Range<Int>, quiet: Range<Int>) -> Double {
        let speech = energy(output, speaking) / Double(speaking.count) - energy(output, quiet) / Double(quiet.count)
        return decibels(speech / (energy(driver, speaking) / Double(speaking.count)))
    }

    /// A frame count that is a whole number of 10 ms frames.
    public static func whole(_ count: Int) -> Int { count / (rate / 100) * (rate / 100) }
}

extension CabinSound {
    /// Samples as 16-bit signed little-endian PCM (what a microphone file holds).
    public static func pcm16(_ samples: [Float]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: samples.count * 2)
        for (index, sample) in samples.enumerated() {
            let bits = UInt16(bitPattern: Int16(clamping: Int((sample * 32768).rounded())))
            bytes[2 * index] = UInt8(truncatingIfNeeded: bits)
            bytes[2 * index + 1] = UInt8(truncatingIfNeeded: bits >> 8)
        }
        return bytes
    }

    /// 16-bit signed little-endian PCM as samples.
    public static func samples(pcm16 bytes: [UInt8]) -> [Float] {
        (0 ..< bytes.count / 2).map { Float(Int16(bitPattern: UInt16(bytes[2 * $0]) | UInt16(bytes[2 * $0 + 1]) << 8)) / 32768 }
    }
}
