import Foundation

/// Real speech for tests, from espeak-ng: 22050 Hz mono signed 16-bit samples.
public enum SpokenAudio {
    public static let sampleRate: UInt32 = 22050

    /// espeak-ng speaking `text`, as samples.
    public static func samples(_ text: String) throws -> [Int16] {
        let bytes = try pcm(text)
        return stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
    }

    /// espeak-ng speaking `text`, as raw little-endian PCM bytes.
    public static func pcm(_ text: String) throws -> [UInt8] {
        let wav = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-speech-\(UUID().uuidString).wav")
        defer { try? FileManager.default.removeItem(at: wav) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/espeak-ng")
        process.arguments = ["-w", wav.path, text]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw HarnessError("espeak-ng exited with \(process.terminationStatus)") }
        let bytes = [UInt8](try Data(contentsOf: wav))
        // The samples are the "data" chunk of the RIFF file.
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            if id == "data" { return Array(bytes[(offset + 8)..<min(bytes.count, offset + 8 + size)]) }
            offset += 8 + size + (size & 1)
        }
        throw HarnessError("espeak-ng wrote no audio data")
    }
}
