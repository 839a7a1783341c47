import Foundation

/// WAV files built byte by byte (independently of libsndfile), and their data chunks.
enum WaveFile {
    enum Encoding {
        case pcm16, pcm24, float32

        var bytesPerSample: Int {
            switch self {
            case .pcm16: 2
            case .pcm24: 3
            case .float32: 4
            }
        }
    }

    /// A canonical RIFF/WAVE file of interleaved `samples` (full scale ±1).
    static func bytes(_ samples: [Float], channels: Int, sampleRate: Int, encoding: Encoding = .pcm16) -> [UInt8] {
        var data: [UInt8] = []
        data.reserveCapacity(samples.count * encoding.bytesPerSample)
        for sample in samples {
            switch encoding {
            case .pcm16:
                let value = Int16(max(-32768, min(32767, (sample * 32767).rounded())))
                append(UInt32(UInt16(bitPattern: value)), bytes: 2, to: &data)
            case .pcm24:
                let value = Int32(max(-8_388_608, min(8_388_607, (Double(sample) * 8_388_607).rounded())))
                append(UInt32(bitPattern: value), bytes: 3, to: &data)
            case .float32:
                append(sample.bitPattern, bytes: 4, to: &data)
            }
        }
        let blockAlign = channels * encoding.bytesPerSample
        var file: [UInt8] = Array("RIFF".utf8)
        append(UInt32(4 + 8 + 16 + 8 + data.count), bytes: 4, to: &file)
        file += Array("WAVEfmt ".utf8)
        append(16, bytes: 4, to: &file)
        append(encoding == .float32 ? 3 : 1, bytes: 2, to: &file)
        append(UInt32(channels), bytes: 2, to: &file)
        append(UInt32(sampleRate), bytes: 4, to: &file)
        append(UInt32(sampleRate * blockAlign), bytes: 4, to: &file)
        append(UInt32(blockAlign), bytes: 2, to: &file)
        append(UInt32(encoding.bytesPerSample * 8), bytes: 2, to: &file)
        file += Array("data".utf8)
        append(UInt32(data.count), bytes: 4, to: &file)
        return file + data
    }

    /// The payload of the file's "data" chunk, found by walking the RIFF chunks.
    static func dataChunk(_ file: [UInt8]) -> ArraySlice<UInt8>? {
        var offset = 12
        while offset + 8 <= file.count {
            let id = String(decoding: file[offset ..< offset + 4], as: UTF8.self)
            let size = (0 ..< 4).reduce(0) { $0 | Int(file[offset + 4 + $1]) << (8 * $1) }
            let start = offset + 8
            if id == "data" { return file[start ..< min(file.count, start + size)] }
            offset = start + size + (size & 1)
        }
        return nil
    }

    private static func append(_ value: UInt32, bytes: Int, to array: inout [UInt8]) {
        for index in 0 ..< bytes { array.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }
}

/// Test signals, interleaved.
enum Signal {
    /// `seconds` of a sine at `frequency` Hz and `peak` (linear), the same in every channel
    /// unless `spread`: then channel n runs at frequency × (n + 1).
    static func sine(frequency: Double, peak: Double, seconds: Double, sampleRate: Int, channels: Int = 1,
                     spread: Bool = false) -> [Float] {
        let frames = Int((seconds * Double(sampleRate)).rounded())
        var samples: [Float] = []
        samples.reserveCapacity(frames * channels)
        for frame in 0 ..< frames {
            let time = Double(frame) / Double(sampleRate)
            for channel in 0 ..< channels {
                let hertz = spread ? frequency * Double(channel + 1) : frequency
                samples.append(Float(peak * sin(2 * Double.pi * hertz * time)))
            }
        }
        return samples
    }
}
