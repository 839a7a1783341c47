@testable import EarshotDBus
import Testing

@Suite struct FixedBodyLayoutTests {
    @Test func laysOutValuesAsTheWireFormatAlignsThem() throws {
        let layout = try #require(FixedBodyLayout([.bytes(DBusBytes([UInt8](repeating: 1, count: 3))), .uint64(7), .uint64(8)]))
        // ay: length at 0, 3 bytes at 4...6; t aligned to 8; t.
        #expect(layout.slots == [.bytes(offset: 0, count: 3), .scalar(offset: 8, size: 8), .scalar(offset: 16, size: 8)])
        #expect(layout.anchor == 0 && layout.anchorDataOffset == 4 && layout.length == 24)

        let mixed = try #require(FixedBodyLayout([.byte(1), .boolean(true), .int16(-2), .bytes([]), .double(0.5), .bytes([1, 2])]))
        #expect(mixed.slots == [.scalar(offset: 0, size: 1), .scalar(offset: 4, size: 4), .scalar(offset: 8, size: 2),
                                .bytes(offset: 12, count: 0), .scalar(offset: 16, size: 8), .bytes(offset: 24, count: 2)])
        // The first byte array with bytes anchors the layout.
        #expect(mixed.anchor == 5 && mixed.anchorDataOffset == 28 && mixed.length == 30)
    }

    @Test func onlyFixedSizeValuesAndByteArraysHaveALayout() {
        #expect(FixedBodyLayout([.bytes([1]), .string("x")]) == nil)
        #expect(FixedBodyLayout([.bytes([1]), .variant(.uint32(1))]) == nil)
        #expect(FixedBodyLayout([.bytes([1]), .array(.uint32, [.uint32(1)])]) == nil)
        // Nothing to anchor to: no byte array, or only empty ones.
        #expect(FixedBodyLayout([.uint64(1)]) == nil)
        #expect(FixedBodyLayout([.bytes([]), .uint64(1)]) == nil)
    }

    @Test func valuesFitOnlyTheSameShape() throws {
        let layout = try #require(FixedBodyLayout([.bytes([1, 2, 3]), .uint64(7)]))
        #expect(layout.fits([.bytes([4, 5, 6]), .uint64(9)]))
        #expect(!layout.fits([.bytes([4, 5]), .uint64(9)]))
        #expect(!layout.fits([.bytes([4, 5, 6])]))
        #expect(!layout.fits([.bytes([4, 5, 6]), .string("9")]))
    }

    @Test func writesValuesInPlace() throws {
        let values: [DBusValue] = [.bytes([9, 8, 7]), .boolean(true), .uint64(0x0102_0304_0506_0708)]
        let layout = try #require(FixedBodyLayout(values))
        let body = UnsafeMutableRawBufferPointer.allocate(byteCount: layout.length, alignment: 8)
        defer { body.deallocate() }
        body.initializeMemory(as: UInt8.self, repeating: 0xEE)
        layout.write(values, into: body.baseAddress!)
        var expected: [UInt8] = [3, 0, 0, 0, 9, 8, 7, 0xEE, 1, 0, 0, 0, 0xEE, 0xEE, 0xEE, 0xEE]
        expected += withUnsafeBytes(of: UInt64(0x0102_0304_0506_0708)) { Array($0) }
        #expect(Array(body) == expected)
    }
}
