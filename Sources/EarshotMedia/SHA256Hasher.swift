import CGcrypt

/// Streaming SHA-256 through libgcrypt, which every service maps already (libdbus links
/// libsystemd, which links it); a digest needs no library of its own.
///
///     var hasher = SHA256Hasher()
///     hasher.update(bytes)
///     let hex = hasher.finalize()
public struct SHA256Hasher: ~Copyable {
    /// The digest handle, owned by this value.
    private let handle: gcry_md_hd_t

    public init() {
        _ = Self.library
        var handle: gcry_md_hd_t?
        guard gcry_md_open(&handle, Int32(GCRY_MD_SHA256.rawValue), 0) == 0, let handle else {
            fatalError("libgcrypt: cannot open a SHA-256 digest")
        }
        self.handle = handle
    }

    /// libgcrypt initialised once per process (a global's initialiser runs once, under
    /// the runtime's lock); its version.
    private static let library = String(cString: earshot_gcrypt_initialize())

    deinit {
        gcry_md_close(handle)
    }

    /// Adds `bytes` to the digest.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        gcry_md_write(handle, base, bytes.count)
    }

    /// The digest of everything added, as 64 lowercase hexadecimal digits.
    public consuming func finalize() -> String {
        guard let digest = gcry_md_read(handle, Int32(GCRY_MD_SHA256.rawValue)) else {
            fatalError("libgcrypt: SHA-256 finalization failed")
        }
        return Hexadecimal.lowercase(UnsafeBufferPointer(start: digest, count: 32))
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
