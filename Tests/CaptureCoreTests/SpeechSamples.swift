import EarshotTestHarness
import Foundation

/// Test audio: real speech from espeak-ng (22050 Hz mono S16_LE), silence and noise.
enum SpeechSamples {
    static let rate: UInt32 = 22050

    /// espeak-ng speaking `text`.
    static func speech(_ text: String) throws -> [Int16] {
        try SpokenAudio.samples(text)
    }

    static func silence(ms: Int) -> [Int16] { [Int16](repeating: 0, count: Int(rate) * ms / 1000) }

    /// Quiet white noise (about -50 dBFS), as a room heard through a microphone.
    static func noise(ms: Int, amplitude: Int16 = 100, seed: UInt64 = 42) -> [Int16] {
        var state = seed
        return (0..<(Int(rate) * ms / 1000)).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int16(truncatingIfNeeded: Int64(state >> 33) % Int64(2 * amplitude + 1) - Int64(amplitude))
        }
    }

    /// Road rumble: brown noise (white noise through a leaky integrator, its energy below
    /// about 100 Hz) at `rms`.
    static func rumble(ms: Int, rms: Double, seed: UInt64 = 5) -> [Int16] {
        var state = seed
        var level = 0.0
        let raw = (0..<(Int(rate) * ms / 1000)).map { _ -> Double in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            level = 0.998 * level + (Double(state >> 11) / Double(1 << 53) * 2 - 1) * 0.05
            return level
        }
        let current = (raw.reduce(0) { $0 + $1 * $1 } / Double(max(1, raw.count))).squareRoot()
        return raw.map { Int16(clamping: Int(($0 * rms / max(current, 1e-9)).rounded())) }
    }

    static func rms(_ samples: [Int16]) -> Double {
        (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, samples.count))).squareRoot()
    }

    static func bytes(_ samples: [Int16]) -> [UInt8] {
        samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
    }
}
