@testable import EarshotDBus
import Testing

@Suite struct SignatureTests {
    @Test func rendersAndParsesEveryType() throws {
        let signatures = ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "h", "v",
                          "ay", "as", "a{sv}", "a{ya(iv)}", "(ybnqiuxtdsogh)", "aa{sv}", "a(ss)", "((((i))))"]
        for signature in signatures {
            #expect(try DBusType(signature: signature).signature == signature)
        }
        #expect(try DBusType.parseList("sa{sv}as").map(\.signature) == ["s", "a{sv}", "as"])
        #expect(try DBusType.parseList("").isEmpty)
    }

    @Test(arguments: [
        ("a", "unexpected end"), ("(", "unterminated struct"), ("()", "empty struct"),
        ("a{vs}", "basic type"), ("a{s}", "exactly a key and a value"), ("a{sss}", "exactly a key and a value"),
        ("{sv}", "unknown type code"), ("z", "unknown type code"), (")", "unknown type code"),
    ])
    func refusesMalformedSignatures(signature: String, why: String) {
        #expect {
            _ = try DBusType.parseList(signature)
        } throws: { error in
            guard let error = error as? DBusError else { return false }
            return error.name == "org.freedesktop.DBus.Error.InvalidArgs" && error.message.contains(why)
        }
    }

    @Test func enforcesTheSpecificationLimits() throws {
        #expect(throws: DBusError.self) { try DBusType(signature: String(repeating: "a", count: 33) + "y") }
        _ = try DBusType(signature: String(repeating: "a", count: 32) + "y")
        #expect(throws: DBusError.self) { try DBusType(signature: String(repeating: "(", count: 33) + "y" + String(repeating: ")", count: 33)) }
        #expect(throws: DBusError.self) { try DBusType.parseList(String(repeating: "y", count: 256)) }
        #expect(try DBusType.parseList(String(repeating: "y", count: 255)).count == 255)
    }

    @Test func onlyOneCompleteTypeForAType() {
        #expect(throws: DBusError.self) { try DBusType(signature: "ss") }
        #expect(throws: DBusError.self) { try DBusType(signature: "") }
    }

    @Test func objectPathsAreValidated() throws {
        for good in ["/", "/a", "/org/earshot/Capture1", "/a_b/C9"] { _ = try ObjectPath(good) }
        for bad in ["", "a", "//", "/a/", "/a//b", "/a-b", "/ä"] {
            #expect(throws: DBusError.self) { try ObjectPath(bad) }
        }
        #expect(ObjectPath("/a/b").isWithin("/a"))
        #expect(!ObjectPath("/ab").isWithin("/a"))
    }

    @Test func signatureLengthsAreTheRenderedSignaturesLengths() throws {
        let values: [DBusValue] = [
            .byte(1), .bytes([1, 2]), .strings(["a"]), .vardict(["k": .bytes([])]),
            .dictionary(key: .uint64, value: .array(.structure([.string, .variant])), []),
            .structure([.int32(1), .structure([.bytes([]), .variant(.string("x"))]), .array(.array(.double), [])]),
            .variant(.structure([.string("inner is not in the signature")])),
        ]
        for value in values {
            #expect(value.signatureLength == value.type.signature.utf8.count, "\(value.type)")
            #expect(value.type.signatureLength == value.type.signature.utf8.count, "\(value.type)")
        }
    }

    @Test func aBodySignatureLongerThan255BytesIsRefused() throws {
        // 50 × "a{sv}" is 250 bytes; with "(iay)" (5) it is 255, with "(iayy)" (6) 256.
        let dictionaries = [DBusValue](repeating: .vardict([:]), count: 50)
        try MessageCodec.validateBody(dictionaries + [.structure([.int32(1), .bytes([])])])
        #expect {
            try MessageCodec.validateBody(dictionaries + [.structure([.int32(1), .bytes([]), .byte(0)])])
        } throws: { error in
            (error as? DBusError)?.message == "message body signature is 256 bytes long, the limit is 255"
        }
    }

    @Test func headerNamesAreValidatedWithLibdbusReasons() throws {
        try DBusNames.validateInterface("org.earshot.Echo1")
        try DBusNames.validateMember("EchoBytes")
        try DBusNames.validateErrorName("org.example.Error.Rejected")
        for name in [":1.5", "org.example.Echo", "a.b"] { try DBusNames.validateBusName(name) }
        func refusal(_ check: () throws(DBusError) -> Void) -> String? {
            do { try check() } catch { return error.message }
            return nil
        }
        // A NUL right after a valid name would pass a check of the C string alone.
        #expect(refusal { () throws(DBusError) in try DBusNames.validateInterface("org.earshot.Echo1\u{0}") }
                == "interface name contains a NUL character")
        #expect(refusal { () throws(DBusError) in try DBusNames.validateMember("Echo\u{0}Bytes") }
                == "member name contains a NUL character")
        #expect(refusal { () throws(DBusError) in try DBusNames.validateBusName("org..earshot") }?
                    .hasPrefix("'org..earshot' is not a valid bus name: ") == true)
        let long = "org." + String(repeating: "x", count: 252)
        #expect(refusal { () throws(DBusError) in try DBusNames.validateInterface(long) }?
                    .hasPrefix("'\(long)' is not a valid interface name: ") == true)
        #expect(!DBusNames.isValidBusName("1starts.with.digit"))
        #expect(DBusNames.isValidBusName(":1.5"))
    }
}
