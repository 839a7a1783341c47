/// A D-Bus value of any type.
///
/// Containers carry their element types so that empty arrays and dictionaries keep their
/// signature. Byte arrays have their own case (`bytes`) and travel in one block.
public indirect enum DBusValue: Sendable, Equatable, CustomStringConvertible {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    case signature(String)
    case unixFD(UnixFD)
    /// `ay`, appended and read in one block (a large block read from a message stays
    /// where libdbus holds it; see `DBusBytes`).
    case bytes(DBusBytes)
    /// An array of any element type other than dictionary entries.
    case array(DBusType, [DBusValue])
    /// `a{kv}`: entries in order.
    case dictionary(key: DBusType, value: DBusType, [DictionaryEntry])
    case structure([DBusValue])
    case variant(DBusValue)

    public struct DictionaryEntry: Sendable, Equatable {
        public var key: DBusValue
        public var value: DBusValue
        public init(_ key: DBusValue, _ value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The value's complete type.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .bytes: .array(.byte)
        case .array(let element, _): .array(element)
        case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
        case .structure(let fields): .structure(fields.map(\.type))
        case .variant: .variant
        }
    }

    /// The length of `type.signature` in bytes, found without building the type or its
    /// signature.
    var signatureLength: Int {
        switch self {
        case .bytes: 2
        case .array(let element, _): 1 + element.signatureLength
        case .dictionary(let key, let value, _): 3 + key.signatureLength + value.signatureLength
        case .structure(let fields): fields.reduce(2) { $0 + $1.signatureLength }
        default: 1
        }
    }

    public static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch (lhs, rhs) {
        case let (.byte(a), .byte(b)): a == b
        case let (.boolean(a), .boolean(b)): a == b
        case let (.int16(a), .int16(b)): a == b
        case let (.uint16(a), .uint16(b)): a == b
        case let (.int32(a), .int32(b)): a == b
        case let (.uint32(a), .uint32(b)): a == b
        case let (.int64(a), .int64(b)): a == b
        case let (.uint64(a), .uint64(b)): a == b
        case let (.double(a), .double(b)): a == b || (a.isNaN && b.isNaN)
        case let (.string(a), .string(b)): a == b
        case let (.objectPath(a), .objectPath(b)): a == b
        case let (.signature(a), .signature(b)): a == b
        case let (.unixFD(a), .unixFD(b)): a === b
        case let (.bytes(a), .bytes(b)): a == b
        case let (.bytes(a), .array(.byte, b)), let (.array(.byte, b), .bytes(a)):
            a.map(DBusValue.byte) == b
        case let (.array(ta, a), .array(tb, b)): ta == tb && a == b
        case let (.dictionary(ka, va, a), .dictionary(kb, vb, b)): ka == kb && va == vb && a == b
        case let (.structure(a), .structure(b)): a == b
        case let (.variant(a), .variant(b)): a == b
        default: false
        }
    }

    public var description: String {
        switch self {
        case .byte(let v): "byte \(v)"
        case .boolean(let v): "\(v)"
        case .int16(let v): "int16 \(v)"
        case .uint16(let v): "uint16 \(v)"
        case .int32(let v): "int32 \(v)"
        case .uint32(let v): "uint32 \(v)"
        case .int64(let v): "int64 \(v)"
        case .uint64(let v): "uint64 \(v)"
        case .double(let v): "double \(v)"
        case .string(let v): "\"\(v)\""
        case .objectPath(let v): "path \(v.rawValue)"
        case .signature(let v): "signature \(v)"
        case .unixFD(let v): v.description
        case .bytes(let v): "ay[\(v.count) bytes]"
        case .array(let t, let v): "a\(t.signature)[" + v.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let v):
            "{" + v.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let v): "(" + v.map(\.description).joined(separator: ", ") + ")"
        case .variant(let v): "<\(v)>"
        }
    }
}

// MARK: - Convenience constructors

extension DBusValue {
    /// An `a{sv}` dictionary, entries sorted by key for a stable order.
    public static func vardict(_ entries: [String: DBusValue]) -> DBusValue {
        .dictionary(key: .string, value: .variant,
                    entries.sorted { $0.key < $1.key }.map { DictionaryEntry(.string($0.key), .variant($0.value)) })
    }

    /// An `as` array.
    public static func strings(_ values: [String]) -> DBusValue {
        .array(.string, values.map(DBusValue.string))
    }

    /// An `aa{sv}` array.
    public static func vardicts(_ values: [[String: DBusValue]]) -> DBusValue {
        .array(.dictionary(key: .string, value: .variant), values.map(DBusValue.vardict))
    }
}

// MARK: - Typed access

extension DBusValue {
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    public var boolValue: Bool? { if case .boolean(let v) = self { v } else { nil } }
    public var doubleValue: Double? { if case .double(let v) = self { v } else { nil } }
    public var uint16Value: UInt16? { if case .uint16(let v) = self { v } else { nil } }
    public var uint32Value: UInt32? { if case .uint32(let v) = self { v } else { nil } }
    public var uint64Value: UInt64? { if case .uint64(let v) = self { v } else { nil } }
    public var int32Value: Int32? { if case .int32(let v) = self { v } else { nil } }
    public var objectPathValue: ObjectPath? { if case .objectPath(let v) = self { v } else { nil } }
    public var unixFDValue: UnixFD? { if case .unixFD(let v) = self { v } else { nil } }
    public var variantValue: DBusValue? { if case .variant(let v) = self { v } else { nil } }

    /// Byte arrays, whether decoded as a block or built element by element.
    public var bytesValue: DBusBytes? {
        switch self {
        case .bytes(let v): v
        case .array(.byte, let v): DBusBytes(v.compactMap { if case .byte(let b) = $0 { b } else { nil } })
        default: nil
        }
    }

    /// Array elements (not for byte blocks or dictionaries).
    public var arrayValue: [DBusValue]? {
        switch self {
        case .array(_, let v): v
        case .bytes(let v): v.map(DBusValue.byte)
        default: nil
        }
    }

    public var stringArrayValue: [String]? {
        guard case .array(.string, let v) = self else { return nil }
        return v.compactMap(\.stringValue)
    }

    /// The entries of an `a{s…}` dictionary keyed by string; for `a{sv}` the variants are
    /// unwrapped. Later duplicates win.
    public var stringKeyedValue: [String: DBusValue]? {
        guard case .dictionary(.string, let valueType, let entries) = self else { return nil }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            guard case .string(let key) = entry.key else { continue }
            if valueType == .variant, case .variant(let inner) = entry.value {
                result[key] = inner
            } else {
                result[key] = entry.value
            }
        }
        return result
    }

    /// Integer value of any integer type, widened to Int64 when it fits.
    public var integerValue: Int64? {
        switch self {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }
}

/// A D-Bus object path, validated on construction.
public struct ObjectPath: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    /// Validates `rawValue` against the D-Bus object path grammar.
    public init(_ rawValue: String) throws(DBusError) {
        guard ObjectPath.isValid(rawValue) else {
            throw .invalidArgs("'\(rawValue)' is not a valid object path")
        }
        self.rawValue = rawValue
    }

    /// For literals in source code; an invalid literal is a programming error.
    public init(stringLiteral value: String) {
        precondition(ObjectPath.isValid(value), "invalid object path literal \(value)")
        rawValue = value
    }

    /// For paths declared as constants (a contract's); an invalid one is a programming error.
    public init(declared value: String) {
        self.init(stringLiteral: value)
    }

    public static let root: ObjectPath = "/"

    public var description: String { rawValue }

    public static func < (a: ObjectPath, b: ObjectPath) -> Bool { a.rawValue < b.rawValue }

    /// `/`, or `/` followed by `/`-separated non-empty elements of `[A-Za-z0-9_]`.
    public static func isValid(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        guard bytes.last != UInt8(ascii: "/") else { return false }
        var previousSlash = true
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: "/") {
                if previousSlash { return false }
                previousSlash = true
            } else {
                guard isPathElementByte(byte) else { return false }
                previousSlash = false
            }
        }
        return true
    }

    public static func isPathElementByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
    }

    /// This path with one more element.
    public func appending(_ element: String) throws(DBusError) -> ObjectPath {
        try ObjectPath(rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// Whether `self` is `other` or lies below it.
    public func isWithin(_ other: ObjectPath) -> Bool {
        if other.rawValue == "/" { return true }
        return rawValue == other.rawValue || rawValue.hasPrefix(other.rawValue + "/")
    }
}
