import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Testing

@Suite struct PreparedSignalTests {
    static let interface = DBusInterface("org.example.Stream", signals: [
        DBusSignal("Chunk", [DBusArgument("data", "ay"), DBusArgument("sequence", "t")]),
        DBusSignal("Ended"),
    ])
    static let rule = MatchRule(interface: "org.example.Stream", member: "Chunk")

    /// A bus with a sender exporting `/stream`, a receiver, and a third connection.
    static func with(_ body: (ExportedObject, DBusConnection, DBusConnection) async throws -> Void) async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let sender = try await bus.connect()
        let receiver = try await bus.connect()
        let third = try await bus.connect()
        defer {
            sender.close()
            receiver.close()
            third.close()
        }
        let object = try sender.export("/stream", interfaces: [interface])
        try await body(object, receiver, third)
    }

    @Test func sendsTheSameSignalAsEmitToItsDestinationOnly() async throws {
        try await Self.with { object, receiver, third in
            let mine = try await receiver.subscribe(Self.rule, addMatch: false)
            let theirs = try await third.subscribe(Self.rule)
            let prepared = try object.prepare("Chunk", to: receiver.uniqueName)
            #expect(prepared.signature == [.array(.byte), .uint64])
            var serials: [UInt32] = []
            for sequence in 0 ..< 3 {
                serials.append(try prepared.send([.bytes(DBusBytes([UInt8](repeating: UInt8(sequence), count: 3200))), .uint64(UInt64(sequence))]))
            }
            try object.emit("Chunk", [.bytes([9, 9]), .uint64(3)], to: receiver.uniqueName)
            var received: [DBusMessage] = []
            for _ in 0 ..< 4 {
                received.append(try #require(await mine.next(timeout: .seconds(5))))
            }
            let expected: [[DBusValue]] = (0 ..< 3).map { (sequence: Int) -> [DBusValue] in
                [.bytes(DBusBytes([UInt8](repeating: UInt8(sequence), count: 3200))), .uint64(UInt64(sequence))]
            } + [[.bytes([9, 9]), .uint64(3)]]
            #expect(received.map(\.body) == expected)
            for message in received {
                #expect(message.path == "/stream" && message.interface == "org.example.Stream" && message.member == "Chunk")
                #expect(message.destination == receiver.uniqueName && message.sender == object.connection.uniqueName)
                #expect(message.signature == "ayt")
            }
            // Each send is a message of its own.
            #expect(Set(serials).count == 3 && serials == serials.sorted())
            #expect(await theirs.next(timeout: .milliseconds(300)) == nil)
        }
    }

    /// Every send of one shape after the first is a copy of the last written over: each
    /// must arrive as sent, whatever shapes come between.
    @Test func fixedSizeValuesAndByteArraysArriveAsSentInEveryShape() async throws {
        try await Self.with { object, receiver, _ in
            let signature: [DBusType] = [.byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double,
                                         .array(.byte), .array(.byte), .uint64]
            let prepared = try PreparedSignal(connection: object.connection, path: "/stream", interface: "org.example.Stream",
                                              member: "Shapes", signature: signature, destination: receiver.uniqueName)
            let mine = try await receiver.subscribe(MatchRule(interface: "org.example.Stream", member: "Shapes"), addMatch: false)
            // Two shapes in turn, the same shape twice running, then one with nothing to
            // anchor to, then back.
            let lengths: [(Int, Int)] = [(3200, 0), (3200, 0), (3200, 0), (17, 5), (3200, 0), (17, 5), (17, 5), (0, 0), (0, 3), (3200, 0)]
            var sent: [[DBusValue]] = []
            for (index, (first, second)) in lengths.enumerated() {
                let n = UInt8(truncatingIfNeeded: index)
                let values: [DBusValue] = [
                    .byte(n), .boolean(index % 2 == 0), .int16(-Int16(index)), .uint16(UInt16(index) &* 1000),
                    .int32(Int32(index) - 5), .uint32(UInt32(index) << 20), .int64(-Int64(index) << 40),
                    .uint64(UInt64(index) << 50 | 1), .double(index == 4 ? .nan : Double(index) / 3),
                    .bytes(DBusBytes((0 ..< first).map { UInt8(truncatingIfNeeded: $0 &+ index) })),
                    .bytes(DBusBytes([UInt8](repeating: n, count: second))), .uint64(UInt64(index)),
                ]
                try prepared.send(values)
                sent.append(values)
            }
            for values in sent {
                let message = try #require(await mine.next(timeout: .seconds(5)))
                #expect(message.body == values)
                #expect(message.signature == "ybnqiuxtdayayt")
            }
        }
    }

    @Test func aBroadcastPreparedSignalReachesSubscribers() async throws {
        try await Self.with { object, receiver, third in
            let theirs = try await third.subscribe(MatchRule(interface: "org.example.Stream", member: "Ended"))
            let prepared = try object.prepare("Ended")
            try prepared.send([])
            #expect(await theirs.next(timeout: .seconds(5))?.destination == nil)
        }
    }

    @Test func argumentsMustMatchTheDeclaration() async throws {
        try await Self.with { object, receiver, _ in
            let prepared = try object.prepare("Chunk", to: receiver.uniqueName)
            let wrongType = #expect(throws: DBusError.self) { try prepared.send([.string("x"), .uint64(0)]) }
            #expect(wrongType?.name == "org.freedesktop.DBus.Error.InvalidArgs")
            #expect(wrongType?.message.contains("'ayt'") == true && wrongType?.message.contains("'st'") == true)
            #expect(throws: DBusError.self) { try prepared.send([.bytes([])]) }
            #expect(throws: DBusError.self) { try object.prepare("Missing") }
        }
    }

    @Test func valuesAreCheckedBeforeLibdbusSeesThem() async throws {
        try await Self.with { object, receiver, _ in
            let prepared = try PreparedSignal(connection: object.connection, path: "/stream", interface: "org.example.Stream",
                                              member: "Line", signature: [.string], destination: receiver.uniqueName)
            let refused = #expect(throws: DBusError.self) { try prepared.send([.string("a\u{0}b")]) }
            #expect(refused?.message.contains("NUL") == true)
            // The service is still up and the signal still works.
            let mine = try await receiver.subscribe(MatchRule(interface: "org.example.Stream", member: "Line"), addMatch: false)
            try prepared.send([.string("fine")])
            #expect(await mine.next(timeout: .seconds(5))?.body == [.string("fine")])
        }
    }

    @Test func badNamesAreRefusedWhenPreparing() async throws {
        try await Self.with { object, _, _ in
            #expect(throws: DBusError.self) {
                try PreparedSignal(connection: object.connection, path: "/stream", interface: "not an interface", member: "Chunk", signature: [])
            }
            #expect(throws: DBusError.self) {
                try PreparedSignal(connection: object.connection, path: "/stream", interface: "org.example.Stream", member: "Bad-Member", signature: [])
            }
            #expect(throws: DBusError.self) {
                try PreparedSignal(connection: object.connection, path: "/stream", interface: "org.example.Stream", member: "Chunk",
                                   signature: [], destination: "no such name")
            }
        }
    }
}
