import EarshotDBus
import Testing

@Suite struct OptionReaderTests {
    let invalidData = DBusError.earshotPrefix + "InvalidData"

    func reader(_ entries: [String: DBusValue]) throws -> OptionReader {
        try OptionReader(.vardict(entries), errorName: invalidData)
    }

    @Test func widensEveryIntegerTypeThatFits() throws {
        let values: [DBusValue] = [.byte(7), .int16(7), .uint16(7), .int32(7), .uint32(7), .int64(7), .uint64(7)]
        for value in values {
            var options = try reader(["MaxDuration": value])
            #expect(try options.require("MaxDuration", .uint32(1...1_000_000, unit: "ms")) == 7)
            try options.finish()
        }
    }

    @Test func refusesIntegersThatDoNotFitWithTheRange() throws {
        for (value, shown) in [(DBusValue.int32(-1), "-1"), (.uint64(1 << 40), "1099511627776"), (.uint32(0), "0")] {
            var options = try reader(["MaxDuration": value])
            let error = #expect(throws: DBusError.self) { try options.require("MaxDuration", .uint32(1...1_000_000, unit: "ms")) }
            #expect(error?.name == invalidData)
            #expect(error?.message == "MaxDuration: \(shown) is outside 1..1000000 ms")
        }
    }

    @Test func wrongTypesNameTheKeyAndBothTypes() throws {
        var options = try reader(["MaxDuration": .string("10")])
        let error = #expect(throws: DBusError.self) { try options.get("MaxDuration", .uint32()) }
        #expect(error?.name == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(error?.message == "MaxDuration: got s, wanted u (or any integer type whose value fits)")

        var flags = try reader(["MuteAudio": .uint32(1)])
        let flagError = #expect(throws: DBusError.self) { try flags.get("MuteAudio", .bool) }
        #expect(flagError?.message == "MuteAudio: got u, wanted b")
    }

    @Test func floatingKeysAcceptIntegersAndRefuseNonFinite() throws {
        var options = try reader(["Tempo": .int32(120), "Gain": .double(0.5)])
        #expect(try options.get("Tempo", .double(1...999.999)) == 120)
        #expect(try options.get("Gain", .double()) == 0.5)
        var bad = try reader(["Tempo": .double(.nan)])
        let error = #expect(throws: DBusError.self) { try bad.get("Tempo", .double()) }
        #expect(error?.name == invalidData)
        var high = try reader(["Tempo": .double(1000)])
        #expect(throws: DBusError.self) { try high.get("Tempo", .double(1...999.999)) }
    }

    @Test func unknownKeysAreRefusedAfterReading() throws {
        var options = try reader(["Title": .string("x"), "Bogus": .boolean(true), "Other": .int32(1)])
        _ = try options.get("Title", .string)
        let error = #expect(throws: DBusError.self) { try options.finish() }
        #expect(error?.name == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(error?.message == "Bogus, Other: unknown keys (known: Title)")
    }

    @Test func missingRequiredKeysAreNamed() throws {
        var options = try reader([:])
        let error = #expect(throws: DBusError.self) { try options.require("SamplingRate", .uint32()) }
        #expect(error?.message.hasPrefix("SamplingRate: required key is missing") == true)
    }

    @Test func onlyStringToVariantDictionariesAreOptions() {
        #expect(throws: DBusError.self) { try OptionReader(.strings(["a"])) }
        #expect(throws: DBusError.self) {
            try OptionReader(.dictionary(key: .string, value: .string, [.init(.string("a"), .string("b"))]))
        }
    }

    @Test func duplicateKeysAreRefused() {
        let value = DBusValue.dictionary(key: .string, value: .variant, [
            .init(.string("A"), .variant(.int32(1))), .init(.string("A"), .variant(.int32(2))),
        ])
        #expect(throws: DBusError.self) { try OptionReader(value) }
    }

    @Test func nestedDictionariesPrefixTheirKeys() throws {
        let buttons = DBusValue.vardicts([["Id": .uint16(1), "Text": .string("OK")], ["Id": .string("x")]])
        var options = try reader(["SoftButtons": buttons])
        var readers = try options.require("SoftButtons", .vardicts)
        #expect(try readers[0].require("Id", .uint16()) == 1)
        let error = #expect(throws: DBusError.self) { try readers[1].require("Id", .uint16()) }
        #expect(error?.message.hasPrefix("SoftButtons[1].Id: got s, wanted q") == true)
        _ = try readers[0].get("Text", .string)
        try readers[0].finish()
    }

    @Test func choicesAndLengths() throws {
        var options = try reader(["Priority": .string("normal"), "Text": .string(String(repeating: "x", count: 501))])
        #expect(try options.get("Priority", .oneOf(["NORMAL", "EMERGENCY"], ignoringCase: true)) == "NORMAL")
        let error = #expect(throws: DBusError.self) { try options.get("Text", .string(maxLength: 500)) }
        #expect(error?.message == "Text: 501 characters, at most 500 allowed")
    }
}
