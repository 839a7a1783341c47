import CNettle

/// Streaming SHA-256 through Nettle: the state is this value's own, and a digest touches
/// nothing of the library but its hash functions.
///
///     var hasher = SHA256Hasher()
///     hasher.update(bytes)
///     let hex = hasher.finalize()
public struct SHA256Hasher: ~Copyable {
    private var context = sha256_ctx()

    public init() {
        nettle_sha256_init(&context)
    }

    /// Adds `bytes` to the digest.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        nettle_sha256_update(&context, bytes.count, base.assumingMemoryBound(to: UInt8.self))
    }

    /// The digest of everything added, as 64 lowercase hexadecimal digits.
    public consuming func finalize() -> String {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_SIZE))
        nettle_sha256_digest(&context, digest.count, &digest)
        return Hexadecimal.lowercase(digest)
    }
}

/// Bytes as hexadecimal text.
enum Hexadecimal {
    private static let digits = Array("0123456789abcdef".utf8)

    static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
