/// A single complete D-Bus type, as a tree.
public indirect enum DBusType: Sendable, Hashable, CustomStringConvertible {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD
    case variant
    case array(DBusType)
    case dictionary(key: DBusType, value: DBusType)
    case structure([DBusType])

    /// The type's signature, e.g. `a{sv}`.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .array(let element): "a" + element.signature
        case .dictionary(let key, let value): "a{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    public var description: String { signature }

    /// The length of `signature` in bytes, found without building it.
    var signatureLength: Int {
        switch self {
        case .array(let element): 1 + element.signatureLength
        case .dictionary(let key, let value): 3 + key.signatureLength + value.signatureLength
        case .structure(let fields): fields.reduce(2) { $0 + $1.signatureLength }
        default: 1
        }
    }

    /// Whether this is a basic (non-container) type, usable as a dictionary key.
    public var isBasic: Bool {
        switch self {
        case .variant, .array, .dictionary, .structure: false
        default: true
        }
    }

    /// Parses one complete type; the signature must hold exactly one.
    public init(signature: String) throws(DBusError) {
        let types = try DBusType.parseList(signature)
        guard types.count == 1 else {
            throw .invalidArgs("signature '\(signature)' holds \(types.count) complete types, wanted one")
        }
        self = types[0]
    }

    /// Parses a signature holding any number of complete types (a message body signature).
    public static func parseList(_ signature: String) throws(DBusError) -> [DBusType] {
        var parser = SignatureParser(signature)
        return try parser.parseAll()
    }
}

/// Renders a list of types as one signature string.
public func signatureString(_ types: [DBusType]) -> String {
    types.map(\.signature).joined()
}

/// Recursive-descent parser for D-Bus signatures, enforcing the specification's limits
/// (255 bytes, 32 levels of array and of struct nesting).
struct SignatureParser {
    private let bytes: [UInt8]
    private let text: String
    private var index = 0

    init(_ signature: String) {
        text = signature
        bytes = Array(signature.utf8)
    }

    mutating func parseAll() throws(DBusError) -> [DBusType] {
        guard bytes.count <= 255 else {
            throw .invalidArgs("signature is \(bytes.count) bytes long, the limit is 255")
        }
        var types: [DBusType] = []
        while index < bytes.count {
            types.append(try parseOne(arrayDepth: 0, structDepth: 0))
        }
        return types
    }

    private func fail(_ why: String) -> DBusError {
        .invalidArgs("invalid signature '\(text)': \(why) at offset \(index)")
    }

    private mutating func parseOne(arrayDepth: Int, structDepth: Int) throws(DBusError) -> DBusType {
        guard index < bytes.count else { throw fail("unexpected end") }
        let code = bytes[index]
        index += 1
        switch code {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            guard arrayDepth < 32 else { throw fail("arrays nested deeper than 32") }
            if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                index += 1
                let key = try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth + 1)
                guard key.isBasic else { throw fail("dictionary key must be a basic type") }
                guard index < bytes.count, bytes[index] != UInt8(ascii: "}") else {
                    throw fail("dictionary entry must hold exactly a key and a value")
                }
                let value = try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth + 1)
                guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
                    throw fail("dictionary entry must hold exactly a key and a value")
                }
                index += 1
                return .dictionary(key: key, value: value)
            }
            return .array(try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth))
        case UInt8(ascii: "("):
            guard structDepth < 32 else { throw fail("structs nested deeper than 32") }
            var fields: [DBusType] = []
            while true {
                guard index < bytes.count else { throw fail("unterminated struct") }
                if bytes[index] == UInt8(ascii: ")") {
                    index += 1
                    break
                }
                fields.append(try parseOne(arrayDepth: arrayDepth, structDepth: structDepth + 1))
            }
            guard !fields.isEmpty else { throw fail("empty struct") }
            return .structure(fields)
        default:
            index -= 1
            throw fail("unknown type code '\(Character(Unicode.Scalar(code)))'")
        }
    }
}
