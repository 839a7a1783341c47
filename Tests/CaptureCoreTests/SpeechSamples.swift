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

    static func bytes(_ samples: [Int16]) -> [UInt8] {
        samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
    }
}
