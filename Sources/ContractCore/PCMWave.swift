/// The contract's PCM (8-bit unsigned or 16-bit signed little-endian, interleaved) as a
/// WAV file: the 44-byte header in front of the samples.
public enum PCMWave {
    public static let headerSize = 44

    /// The header for `dataBytes` bytes of samples. RIFF wants chunks of even length: when
    /// `dataBytes` is odd, the file must end with one padding byte after the samples (the
    /// RIFF size counts it, the data size does not).
    public static func header(sampleRate: UInt32, channels: UInt32, bitsPerSample: UInt32, dataBytes: UInt64) -> [UInt8] {
        let dataSize = UInt32(clamping: dataBytes)
        let padded = dataSize &+ (dataSize % 2)
        let blockAlign = channels * ((bitsPerSample + 7) / 8)
        var header: [UInt8] = []
        header.reserveCapacity(headerSize)
        func text(_ s: String) { header += Array(s.utf8) }
        func u32(_ v: UInt32) { header += [UInt8(v & 0xff), UInt8(v >> 8 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 24)] }
        func u16(_ v: UInt32) { header += [UInt8(v & 0xff), UInt8(v >> 8 & 0xff)] }
        text("RIFF"); u32(36 &+ padded); text("WAVE")
        text("fmt "); u32(16); u16(1); u16(channels); u32(sampleRate); u32(sampleRate * blockAlign); u16(blockAlign)
        u16(bitsPerSample)
        text("data"); u32(dataSize)
        return header
    }

    /// The header of a stream whose length is not known when it starts (a pipe): both
    /// lengths are 0xFFFFFFFF, as readers of streamed WAV expect; the samples run to EOF.
    public static func streamHeader(sampleRate: UInt32, channels: UInt32, bitsPerSample: UInt32) -> [UInt8] {
        var header = header(sampleRate: sampleRate, channels: channels, bitsPerSample: bitsPerSample, dataBytes: 0)
        header.replaceSubrange(4 ..< 8, with: [0xff, 0xff, 0xff, 0xff])
        header.replaceSubrange(40 ..< 44, with: [0xff, 0xff, 0xff, 0xff])
        return header
    }

    /// 16-bit samples as the WAV data's bytes (little-endian).
    public static func bytes(_ samples: [Int16]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: samples.count * 2)
        for (index, sample) in samples.enumerated() {
            bytes[2 * index] = UInt8(truncatingIfNeeded: sample)
            bytes[2 * index + 1] = UInt8(truncatingIfNeeded: sample >> 8)
        }
        return bytes
    }
}
