import EarshotDBus
import Testing

@Suite struct DeclaredRequestTests {
    static let invalidData = "org.example.Error.InvalidData"
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"

    static let maxDuration = OptionKey("Duration", "u", doc: "ms", required: true, rules: [.range(1...1_000_000, unit: "ms")],
                                       error: invalidData)
    static let rate = OptionKey("Rate", "u", doc: "Hz", default: "16000",
                                rules: [.oneOf(["8000", "16000"], aliases: ["8KHZ": "8000", "16KHZ": "16000"])], error: invalidData)
    static let mute = OptionKey("Quiet", "b", doc: "mute", default: "true")
    static let tempo = OptionKey("Speed", "d", doc: "BPM", rules: [.range(1...999.999, unit: "BPM")], error: invalidData)
    static let title = OptionKey("Label", "s", doc: "title", default: "\"\"", rules: [.maxLength(5)], error: invalidData)
    static let priority = OptionKey("Urgency", "s", doc: "p", default: "NORMAL", rules: [.oneOf(["NORMAL", "EMERGENCY"])],
                                    error: invalidData)
    static let category = OptionKey("Mood", "s", doc: "c", rules: [.oneOf(["playAndRecord"], aliases: ["play-and-record": "playAndRecord"],
                                                                                anyCase: true)], error: "org.example.Error." + "InvalidMood")
    static let named = OptionKey("Nick", "s", doc: "n", rules: [.range(1...3, unit: "scalars")],
                                 errors: ["org.example.Error." + "TooShort", "org.example.Error." + "TooLong"])
    static let buttons = OptionKey("Buttons", "aa{sv}", doc: "b", keys: [
        OptionKey("Number", "q", doc: "id", required: true, error: invalidData),
        OptionKey("Caption", "s", doc: "t", default: "\"\""),
    ])
    static let keys = [maxDuration, rate, mute, tempo, title, priority, category, named, buttons]

    func read(_ entries: [String: DBusValue]) throws(DBusError) -> DeclaredRequest {
        try DeclaredRequest(.vardict(entries), keys: Self.keys)
    }

    func refusal(_ entries: [String: DBusValue]) -> DBusError? {
        #expect(throws: DBusError.self) { try read(entries) }
    }

    @Test func integerKeysTakeEveryIntegerTypeThatFits() throws {
        for value in [DBusValue.byte(7), .int16(7), .uint16(7), .int32(7), .uint32(7), .int64(7), .uint64(7)] {
            let request = try read(["Duration": value])
            #expect(try request.require(Self.maxDuration, as: UInt32.self) == 7)
        }
    }

    @Test func numbersOutsideTheirRangeGetTheKeysError() {
        for (value, shown) in [(DBusValue.int32(-1), "-1"), (.uint64(1 << 40), "1099511627776"), (.uint32(0), "0")] {
            let error = refusal(["Duration": value])
            #expect(error?.name == Self.invalidData)
            #expect(error?.message == "Duration: \(shown) is outside 1..1000000 ms")
        }
        #expect(refusal(["Duration": .uint32(5), "Speed": .double(1000)])?.message == "Speed: 1000 is outside 1..999.999 BPM")
    }

    @Test func wrongTypesNameTheKeyAndBothTypes() {
        let error = refusal(["Duration": .string("10")])
        #expect(error?.name == Self.invalidArgs)
        #expect(error?.message == "Duration: got s, wanted u (or any integer type whose value fits)")
        #expect(refusal(["Duration": .uint32(5), "Quiet": .uint32(1)])?.message == "Quiet: got u, wanted b")
        #expect(refusal(["Duration": .uint32(5), "Rate": .boolean(true)])?.message
            == "Rate: got b, wanted u (or its name as s)")
    }

    @Test func floatingKeysTakeIntegersAndRefuseNonFinite() throws {
        #expect(try read(["Duration": .uint32(5), "Speed": .int32(120)]).get(Self.tempo, as: Double.self) == 120)
        #expect(refusal(["Duration": .uint32(5), "Speed": .double(.nan)])?.name == Self.invalidData)
    }

    @Test func absentKeysGiveTheirDeclaredDefaults() throws {
        let request = try read(["Duration": .uint32(5)])
        #expect(try request.require(Self.rate, as: UInt32.self) == 16000)
        #expect(try request.require(Self.mute, as: Bool.self) == true)
        #expect(try request.require(Self.title, as: String.self) == "")
        #expect(try request.require(Self.priority, as: String.self) == "NORMAL")
        #expect(try request.get(Self.tempo, as: Double.self) == nil)
        #expect(!request.has(Self.mute))
    }

    @Test func aliasesComeBackAsTheirValues() throws {
        let request = try read(["Duration": .uint32(5), "Rate": .string("8khz"), "Mood": .string("PLAY-AND-RECORD")])
        #expect(try request.require(Self.rate, as: UInt32.self) == 8000)
        #expect(try request.require(Self.category, as: String.self) == "playAndRecord")
        let error = refusal(["Duration": .uint32(5), "Rate": .string("96KHZ")])
        #expect(error?.name == Self.invalidData)
        #expect(error?.message.hasPrefix("Rate: '96KHZ' is not one of 8000, 16000") == true)
        #expect(refusal(["Duration": .uint32(5), "Rate": .uint32(44100)])?.message == "Rate: 44100 is not 8000 or 16000")
    }

    @Test func allowedStringsAreExactUnlessAnyCase() {
        let error = refusal(["Duration": .uint32(5), "Urgency": .string("normal")])
        #expect(error?.name == Self.invalidData)
        #expect(error?.message == "Urgency: 'normal' is not NORMAL or EMERGENCY")
        #expect(refusal(["Duration": .uint32(5), "Mood": .string("loud")])?.name == "org.example.Error." + "InvalidMood")
    }

    @Test func textLongerThanAllowed() {
        #expect(refusal(["Duration": .uint32(5), "Label": .string("abcdef")])?.message == "Label: 6 characters, at most 5 allowed")
    }

    @Test func keysWithSeveralErrorsLeaveTheirRulesToTheDomain() throws {
        #expect(try read(["Duration": .uint32(5), "Nick": .string("")]).get(Self.named, as: String.self) == "")
        #expect(try read(["Duration": .uint32(5), "Nick": .string("abcdef")]).get(Self.named, as: String.self) == "abcdef")
    }

    @Test func missingRequiredUnknownAndDuplicateKeysAreInvalidArgs() {
        let missing = refusal([:])
        #expect(missing?.name == Self.invalidArgs)
        #expect(missing?.message == "Duration: required key is missing (wanted u (or any integer type whose value fits))")
        let unknown = refusal(["Duration": .uint32(5), "Bogus": .boolean(true), "Other": .int32(1)])
        #expect(unknown?.name == Self.invalidArgs)
        #expect(unknown?.message.hasPrefix("Bogus, Other: unknown keys (known: Buttons, Duration") == true)
        let twice = DBusValue.dictionary(key: .string, value: .variant, [
            .init(.string("Duration"), .variant(.int32(1))), .init(.string("Duration"), .variant(.int32(2))),
        ])
        #expect(throws: DBusError.self) { try DeclaredRequest(twice, keys: Self.keys) }
        #expect(throws: DBusError.self) { try DeclaredRequest(.strings(["a"]), keys: Self.keys) }
    }

    @Test func nestedDictionariesAreReadAgainstTheirKeysAndNamedByPlace() throws {
        let request = try read(["Duration": .uint32(5),
                                "Buttons": .vardicts([["Number": .uint32(1), "Caption": .string("OK")], ["Number": .uint16(2)]])])
        let buttons = try request.dictionaries(Self.buttons)
        #expect(try buttons.map { try $0.require(Self.buttons.keys[0], as: UInt16.self) } == [1, 2])
        #expect(try buttons[1].require(Self.buttons.keys[1], as: String.self) == "")
        #expect(buttons[1].context == "Buttons[1].")
        let wrong = refusal(["Duration": .uint32(5), "Buttons": .vardicts([["Number": .uint16(1)], ["Number": .string("x")]])])
        #expect(wrong?.message == "Buttons[1].Number: got s, wanted q (or any integer type whose value fits)")
        let unknown = refusal(["Duration": .uint32(5), "Buttons": .vardicts([["Number": .uint16(1), "Colour": .string("red")]])])
        #expect(unknown?.message == "Buttons[0].Colour: unknown key (known: Caption, Number)")
    }

    @Test func aKeyOutsideTheRequestIsAnInternalErrorNotACrash() throws {
        let request = try read(["Duration": .uint32(5)])
        let error = #expect(throws: DBusError.self) { try request.get(OptionKey("Elsewhere", "s", doc: ""), as: String.self) }
        #expect(error?.name == "org.freedesktop.DBus.Error.Failed")
        let mismatch = #expect(throws: DBusError.self) { try request.get(Self.maxDuration, as: String.self) }
        #expect(mismatch?.name == "org.freedesktop.DBus.Error.Failed")
    }
}
