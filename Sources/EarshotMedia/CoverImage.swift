/// Cover images: their kind and pixel dimensions, from the file's own bytes.
public enum CoverImage {
    public enum Kind: String, Sendable {
        case png, jpeg
    }

    /// How much of the file `inspect` reads at most.
    static let prefixLimit = 1 << 20

    /// Reads the image's kind and pixel dimensions from the start of the file: for PNG the
    /// signature and the IHDR chunk (its fields and CRC checked); for JPEG the SOI marker,
    /// then the segments up to the first frame header (SOF0...SOF15 but DHT, JPG and DAC).
    /// Reads at most the first 1 MiB. Throws `.invalidImage` for anything else, or a
    /// truncated or corrupt header; `.io` if the file cannot be read.
    public static func inspect(path: String) throws(MediaError) -> (kind: Kind, width: Int, height: Int) {
        let file = try ReadOnlyFile(path: path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: prefixLimit, alignment: 1)
        defer { buffer.deallocate() }
        let count = try file.read(into: buffer)
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[0 ..< count])
        let header: ImageHeader
        if PNGHeader.hasSignature(bytes) {
            header = try PNGHeader.parse(bytes)
        } else if JPEGHeader.hasSignature(bytes) {
            header = try JPEGHeader.parse(bytes, limited: count == prefixLimit)
        } else {
            throw .invalidImage("'\(path)' is neither a PNG nor a JPEG image")
        }
        return (header.kind, header.width, header.height)
    }
}

/// What a header parser found.
struct ImageHeader: Equatable {
    let kind: CoverImage.Kind
    let width: Int
    let height: Int
}

/// Big-endian reads that stay inside the bytes.
extension UnsafeRawBufferPointer {
    func bigEndian16(at offset: Int) -> Int? {
        guard offset >= 0, offset + 2 <= count else { return nil }
        return Int(self[offset]) << 8 | Int(self[offset + 1])
    }

    func bigEndian32(at offset: Int) -> UInt32? {
        guard offset >= 0, offset + 4 <= count else { return nil }
        return (offset ..< offset + 4).reduce(0) { $0 << 8 | UInt32(self[$1]) }
    }
}
