import EarshotDBus
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
}
