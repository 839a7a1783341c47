import EarshotDBus
import EarshotTestSupport
import EarshotEcho
import Foundation
import Glibc
import Testing

@Suite struct ValueRoundTripTests {
    static let basics: [DBusValue] = [
        .byte(0), .byte(255), .boolean(true), .boolean(false),
        .int16(.min), .int16(.max), .uint16(.max), .int32(.min), .int32(.max), .uint32(.max),
        .int64(.min), .int64(.max), .uint64(.max), .double(-0.5), .double(.infinity), .double(1e-300),
        .string(""), .string("héllo 🎵 \u{7F}"), .objectPath("/"), .objectPath("/org/earshot/Capture1/PassThru/7"),
        .signature(""), .signature("a{sv}(ii)"),
    ]

    static let containers: [DBusValue] = [
        .bytes([]), .bytes([0, 1, 2, 255]), .array(.string, []), .strings(["a", "b", ""]),
        .array(.int32, [.int32(1), .int32(-2)]), .array(.array(.byte), [.bytes([1]), .bytes([])]),
        .vardict([:]), .vardict(["a": .uint32(1), "b": .strings(["x"]), "c": .vardict(["d": .boolean(true)])]),
        .dictionary(key: .uint64, value: .string, [.init(.uint64(1), .string("one")), .init(.uint64(2), .string("two"))]),
        .dictionary(key: .objectPath, value: .array(.double), [.init(.objectPath("/a"), .array(.double, [.double(1.5)]))]),
        .structure([.byte(1), .string("s"), .structure([.objectPath("/x"), .vardicts([["k": .int16(-1)]])])]),
        .array(.structure([.string, .string]), [.structure([.string("TEXT"), .string("hello")])]),
        .variant(.variant(.variant(.string("deep")))),
        .array(.variant, [.variant(.int32(1)), .variant(.string("two")), .variant(.variant(.bytes([3])))]),
    ]

    @Test func everyTypeSurvivesARoundTrip() async throws {
        try await EchoFixture.with { echo in
            for value in Self.basics + Self.containers {
                let reply = try await echo.call("Echo", [.variant(value)])
                #expect(reply == [.variant(value)], "\(value)")
                #expect(reply.first?.variantValue?.type == value.type)
            }
        }
    }

    @Test func deepNestingUpToTheLimits() async throws {
        try await EchoFixture.with { echo in
            var nested = DBusValue.int32(42)
            for _ in 0..<20 { nested = .structure([nested]) }
            var arrays = DBusValue.bytes([9])
            for _ in 0..<20 { arrays = .array(arrays.type, [arrays]) }
            var variants = DBusValue.string("core")
            for _ in 0..<30 { variants = .variant(variants) }
            for value in [nested, arrays, variants] {
                let reply = try await echo.call("Echo", [.variant(value)])
                #expect(reply == [.variant(value)])
            }
            // Deeper than the specification allows is refused before anything is sent.
            var tooDeep = DBusValue.int32(1)
            for _ in 0..<70 { tooDeep = .variant(tooDeep) }
            await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") { _ = try await echo.call("Echo", [tooDeep]) }
        }
    }

    @Test func largeByteArraysTravelInOneBlock() async throws {
        try await EchoFixture.with { echo in
            let payload = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let reply = try await echo.call("EchoBytes", [.bytes(DBusBytes(payload))])
            let echoed = try #require(reply.first?.bytesValue)
            #expect(echoed == DBusBytes(payload))
            #expect(echoed.array == payload)
            // Read where libdbus holds it, not copied.
            #expect(echoed.isBorrowedFromMessage)
        }
    }

    @Test func receivedBlocksAreBorrowedFromTheirMessageFromACertainSize() async throws {
        try await EchoFixture.with { echo in
            let limit = DBusBytes.borrowedMinimum
            var kept: [(DBusBytes, [UInt8])] = []
            for (index, size) in [1, limit - 1, limit, limit + 1, 300_000].enumerated() {
                let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }
                let echoed = try #require(try await echo.call("EchoBytes", [.bytes(DBusBytes(payload))]).first?.bytesValue)
                #expect(echoed.isBorrowedFromMessage == (size >= limit), "\(size) bytes")
                kept.append((echoed, payload))
            }
            // Their messages are long gone from the connection; other traffic reuses its
            // buffers; each block still reads as it arrived, on any thread.
            for _ in 0..<20 { _ = try await echo.call("EchoBytes", [.bytes(DBusBytes([UInt8](repeating: 0xEE, count: 200_000)))]) }
            for (echoed, payload) in kept {
                let same = await Task.detached { echoed.array == payload && echoed.elementsEqual(payload) }.value
                #expect(same)
                #expect(echoed.withUnsafeBytes { Array($0) } == payload)
            }
            // A borrowed block goes out again as it is.
            let (borrowed, payload) = try #require(kept.last)
            #expect(try await echo.call("EchoBytes", [.bytes(borrowed)]) == [.bytes(DBusBytes(payload))])
            // Equal to the same bytes however they are held, and to a byte array built element by element.
            #expect(DBusValue.bytes(borrowed) == .array(.byte, payload.map(DBusValue.byte)))
            #expect(borrowed != DBusBytes(payload.dropLast() + [payload.last! &+ 1]))
        }
    }

    @Test func holdingMoreReceivedBlocksThanLibdbusLimitNeverStopsTheConnection() async throws {
        // libdbus stops reading while its received messages alive exceed 63 MiB by default;
        // held blocks keep their messages alive, so 70 of 1 MiB would stop this client.
        try await EchoFixture.with { echo in
            var held: [DBusBytes] = []
            for index in 0..<70 {
                let payload = DBusBytes([UInt8](repeating: UInt8(index), count: 1 << 20))
                let echoed = try #require(try await echo.call("EchoBytes", [.bytes(payload)], timeout: .seconds(20)).first?.bytesValue)
                #expect(echoed.isBorrowedFromMessage)
                held.append(echoed)
            }
            #expect(try await echo.call("Echo", [.variant(.string("still reading"))], timeout: .seconds(20)) == [.variant(.string("still reading"))])
            for (index, block) in held.enumerated() {
                #expect(block.count == 1 << 20 && block.first == UInt8(index) && block.last == UInt8(index))
            }
        }
    }

    @Test func blocksFromAMessageWithDescriptorsAreCopied() async throws {
        try await EchoFixture.with { echo in
            let payload = [UInt8](repeating: 0x42, count: 64 * 1024)
            let reply = try await echo.call("Echo", [.variant(.structure([.bytes(DBusBytes(payload)), .unixFD(try UnixFD(duplicating: 0))]))])
            guard case .variant(.structure(let fields))? = reply.first, fields.count == 2, let bytes = fields[0].bytesValue else {
                Issue.record("Echo replied \(reply)")
                return
            }
            // Holding the bytes must not keep the message, and with it its descriptor, alive.
            #expect(!bytes.isBorrowedFromMessage)
            #expect(bytes.array == payload)
            #expect(fields[1].unixFDValue?.rawValue != nil)
        }
    }

    @Test func valuesLibdbusWouldAbortOnAreRefusedFirst() async throws {
        try await EchoFixture.with { echo in
            for bad: DBusValue in [.string("nul\u{0}inside"), .signature("a{"), .array(.int32, [.string("x")]),
                                   .dictionary(key: .string, value: .int32, [.init(.string("k"), .uint32(1))]),
                                   .structure([])] {
                await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") { _ = try await echo.call("Echo", [.variant(bad)]) }
            }
            // The connection is still fine afterwards.
            let reply = try await echo.call("Echo", [.variant(.string("ok"))])
            #expect(reply == [.variant(.string("ok"))])
        }
    }

    @Test func fileDescriptorsPassBothWaysAndAreClosedOnce() async throws {
        try await EchoFixture.with { echo in
            // Client to service: the service reads what we wrote.
            var ends: [Int32] = [-1, -1]
            #expect(pipe(&ends) == 0)
            let text = Array("through a pipe".utf8)
            #expect(write(ends[1], text, text.count) == text.count)
            Glibc.close(ends[1])
            let reader = UnixFD(taking: ends[0])
            #expect(try await echo.call("ReadFD", [.unixFD(reader)]) == [.bytes(DBusBytes(text))])
            // We still own our descriptor: sending duplicated it.
            #expect(reader.rawValue != nil && fcntl(reader.rawValue!, F_GETFD) >= 0)
            reader.close()
            #expect(reader.rawValue == nil)
            reader.close()  // a second close does nothing

            // Service to client: we own the received descriptor and read it.
            let reply = try await echo.call("MakePipe", [.bytes(DBusBytes(Array("from the service".utf8)))])
            let received = try #require(reply.first?.unixFDValue)
            let raw = try #require(received.rawValue)
            var buffer = [UInt8](repeating: 0, count: 64)
            let n = read(raw, &buffer, 64)
            #expect(Array(buffer.prefix(max(0, n))) == Array("from the service".utf8))
            let taken = try #require(received.take())
            #expect(received.rawValue == nil)
            #expect(Glibc.close(taken) == 0)

            // A descriptor inside a variant inside a dictionary.
            let wrapped = try await echo.call("Echo", [.variant(.vardict(["fd": .unixFD(try UnixFD(duplicating: 0))]))])
            let inner = try #require(wrapped.first?.variantValue?.stringKeyedValue?["fd"]?.unixFDValue)
            #expect(inner.rawValue.map { fcntl($0, F_GETFD) >= 0 } == true)
        }
    }
}
