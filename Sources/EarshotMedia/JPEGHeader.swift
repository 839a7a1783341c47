/// A JPEG's dimensions from its first frame header (SOFn), found by walking the marker
/// segments that follow the SOI marker.
enum JPEGHeader {
    static func hasSignature(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 2 && bytes[0] == 0xFF && bytes[1] == 0xD8
    }

    /// Whether `marker` starts a frame header: C0...CF except DHT (C4), JPG (C8) and DAC (CC).
    static func isFrameHeader(_ marker: UInt8) -> Bool {
        (0xC0 ... 0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    /// `limited`: `bytes` is only the file's first part, so running out of bytes means the
    /// frame header lies too far in rather than a truncated file.
    static func parse(_ bytes: UnsafeRawBufferPointer, limited: Bool) throws(MediaError) -> ImageHeader {
        var offset = 2
        while true {
            guard offset < bytes.count else { throw runOut(limited: limited, bytes: bytes) }
            guard bytes[offset] == 0xFF else {
                throw .invalidImage("JPEG has no marker at byte \(offset)")
            }
            // A marker may be preceded by any number of 0xFF fill bytes.
            while offset < bytes.count && bytes[offset] == 0xFF { offset += 1 }
            guard offset < bytes.count else { throw runOut(limited: limited, bytes: bytes) }
            let marker = bytes[offset]
            offset += 1
            switch marker {
            case 0x01, 0xD0 ... 0xD7:
                continue // TEM and RSTn stand alone.
            case 0x00, 0xD8:
                throw .invalidImage("JPEG has a misplaced marker 0x\(String(marker, radix: 16)) at byte \(offset - 1)")
            case 0xD9:
                throw .invalidImage("JPEG ends before any frame header")
            case 0xDA:
                throw .invalidImage("JPEG starts a scan before any frame header")
            default:
                break
            }
            guard let length = bytes.bigEndian16(at: offset) else { throw runOut(limited: limited, bytes: bytes) }
            guard length >= 2 else { throw .invalidImage("JPEG segment at byte \(offset - 2) has length \(length)") }
            if isFrameHeader(marker) {
                return try frameHeader(bytes, at: offset, length: length)
            }
            offset += length
        }
    }

    /// Reads the frame header whose length field is at `offset`: precision (1), height (2),
    /// width (2), component count (1), then 3 bytes per component.
    private static func frameHeader(_ bytes: UnsafeRawBufferPointer, at offset: Int, length: Int) throws(MediaError) -> ImageHeader {
        guard offset + 8 <= bytes.count,
              let height = bytes.bigEndian16(at: offset + 3),
              let width = bytes.bigEndian16(at: offset + 5)
        else {
            throw .invalidImage("JPEG truncated inside its frame header")
        }
        let components = Int(bytes[offset + 7])
        guard components >= 1, length == 8 + 3 * components else {
            throw .invalidImage("JPEG frame header has length \(length) for \(components) components")
        }
        guard width > 0 else { throw .invalidImage("JPEG frame header has width 0") }
        guard height > 0 else {
            throw .invalidImage("JPEG frame header defers its height to a DNL marker, which is not supported")
        }
        return ImageHeader(kind: .jpeg, width: width, height: height)
    }

    private static func runOut(limited: Bool, bytes: UnsafeRawBufferPointer) -> MediaError {
        limited
            ? .invalidImage("JPEG has no frame header in its first \(bytes.count) bytes")
            : .invalidImage("JPEG truncated before its frame header")
    }
}
