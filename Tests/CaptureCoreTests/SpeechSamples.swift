import Foundation

/// Test audio: real speech from espeak-ng (22050 Hz mono S16_LE), silence and noise.
enum SpeechSamples {
    static let rate: UInt32 = 22050

    /// espeak-ng speaking `text`, as raw S16_LE samples.
    static func speech(_ text: String) throws -> [Int16] {
        let wav = FileManager.default.temporaryDirectory.appendingPathComponent("speech-\(UUID().uuidString).wav")
        defer { try? FileManager.default.removeItem(at: wav) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/espeak-ng")
        process.arguments = ["-w", wav.path, text]
        try process.run()
        process.waitUntilExit()
        let bytes = [UInt8](try Data(contentsOf: wav))
        // Find the "data" chunk of the RIFF file.
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            if id == "data" {
                let start = offset + 8
                let end = min(bytes.count, start + size)
                return stride(from: start, to: end - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
            }
            offset += 8 + size + (size & 1)
        }
        throw CocoaError(.fileReadCorruptFile)
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
