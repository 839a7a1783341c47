/// Digests of whole files.
public enum FileHashing {
    /// Bytes read per call.
    static let chunkSize = 1 << 20

    /// The SHA-256 of the file at `path`, read in 1 MiB chunks, as lowercase hex.
    /// Throws `.io` if the file cannot be opened or read.
    public static func sha256(path: String) throws(MediaError) -> String {
        let file = try ReadOnlyFile(path: path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var hasher = SHA256Hasher()
        while true {
            let count = try file.read(into: buffer)
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0 ..< count]))
        }
        return hasher.finalize()
    }
}
