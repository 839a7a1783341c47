/// A PNG's dimensions from its signature and IHDR chunk, the chunk that must come first.
enum PNGHeader {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// Bit depths allowed for each colour type (PNG specification, 11.2.2).
    private static let bitDepths: [UInt8: Set<UInt8>] = [
        0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16],
    ]

    static func hasSignature(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= signature.count && bytes.prefix(signature.count).elementsEqual(signature)
    }

    static func parse(_ bytes: UnsafeRawBufferPointer) throws(MediaError) -> ImageHeader {
        // Signature (8), length (4), "IHDR" (4), 13 bytes of fields, CRC (4).
        guard bytes.count >= 33 else { throw .invalidImage("PNG truncated before the end of its IHDR chunk") }
        guard bytes.bigEndian32(at: 8) == 13, bytes[12 ..< 16].elementsEqual(Array("IHDR".utf8)) else {
            throw .invalidImage("PNG does not start with a 13-byte IHDR chunk")
        }
        guard CRC32.checksum(bytes[12 ..< 29]) == bytes.bigEndian32(at: 29) else {
            throw .invalidImage("PNG IHDR chunk fails its CRC")
        }
        let width = bytes.bigEndian32(at: 16) ?? 0
        let height = bytes.bigEndian32(at: 20) ?? 0
        guard (1 ... 0x7FFF_FFFF).contains(width), (1 ... 0x7FFF_FFFF).contains(height) else {
            throw .invalidImage("PNG has invalid dimensions \(width)x\(height)")
        }
        let bitDepth = bytes[24], colourType = bytes[25]
        guard bitDepths[colourType]?.contains(bitDepth) == true else {
            throw .invalidImage("PNG has colour type \(colourType) with bit depth \(bitDepth)")
        }
        guard bytes[26] == 0, bytes[27] == 0, bytes[28] <= 1 else {
            throw .invalidImage("PNG has unknown compression, filter or interlace methods")
        }
        return ImageHeader(kind: .png, width: Int(width), height: Int(height))
    }
}
