import COpenSSL

/// Streaming SHA-256 through libcrypto's EVP interface.
///
///     var hasher = SHA256Hasher()
///     hasher.update(bytes)
///     let hex = hasher.finalize()
public struct SHA256Hasher: ~Copyable {
    /// The `EVP_MD_CTX`, owned by this value.
    private let context: OpaquePointer

    public init() {
        guard let context = EVP_MD_CTX_new() else { fatalError("libcrypto: out of memory for a digest context") }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            fatalError("libcrypto: SHA-256 is not available")
        }
        self.context = context
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    /// Adds `bytes` to the digest.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        guard EVP_DigestUpdate(context, base, bytes.count) == 1 else { fatalError("libcrypto: SHA-256 update failed") }
    }

    /// The digest of everything added, as 64 lowercase hexadecimal digits.
    public consuming func finalize() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &digest, &length) == 1, length == 32 else {
            fatalError("libcrypto: SHA-256 finalization failed")
        }
        return Hexadecimal.lowercase(digest.prefix(Int(length)))
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
