/// The 44-byte header of a PCM WAV file (the piece's mix stem), for `dataBytes` bytes of
/// little-endian PCM (8-bit unsigned or 16-bit signed).
enum WaveHeader {
    static func bytes(sampleRate: UInt32, channels: UInt32, bitsPerSample: UInt32, dataBytes: UInt32) -> [UInt8] {
        func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xff) } }
        func le16(_ value: UInt32) -> [UInt8] { (0..<2).map { UInt8((value >> (8 * $0)) & 0xff) } }
        let blockAlign = channels * bitsPerSample / 8
        return Array("RIFF".utf8) + le32(36 &+ dataBytes) + Array("WAVE".utf8)
            + Array("fmt ".utf8) + le32(16) + le16(1) + le16(channels) + le32(sampleRate) + le32(sampleRate * blockAlign)
            + le16(blockAlign) + le16(bitsPerSample)
            + Array("data".utf8) + le32(dataBytes)
    }
}
