import EarshotDBus

/// A JSON value with object members in a chosen order, written compactly on one line
/// (`--json` output is one document per line, so a stream of them is JSON Lines).
indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    static func == (a: JSONValue, b: JSONValue) -> Bool { a.text == b.text }

    /// An object from a dictionary, members sorted by key.
    static func sorted(_ members: [String: JSONValue]) -> JSONValue {
        .object(members.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// A D-Bus value as JSON: numbers stay numbers, strings, object paths and signatures
    /// become strings, dictionaries objects (keys as text), arrays and structures arrays,
    /// variants their content, byte arrays arrays of numbers, descriptors null.
    init(_ value: DBusValue) {
        switch value {
        case .byte(let v): self = .uint(UInt64(v))
        case .boolean(let v): self = .bool(v)
        case .int16(let v): self = .int(Int64(v))
        case .uint16(let v): self = .uint(UInt64(v))
        case .int32(let v): self = .int(Int64(v))
        case .uint32(let v): self = .uint(UInt64(v))
        case .int64(let v): self = .int(v)
        case .uint64(let v): self = .uint(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .objectPath(let v): self = .string(v.rawValue)
        case .signature(let v): self = .string(v)
        case .unixFD: self = .null
        case .bytes(let v): self = .array(v.map { .uint(UInt64($0)) })
        case .array(_, let v): self = .array(v.map(JSONValue.init))
        case .dictionary(_, _, let entries):
            self = .object(entries.map { entry in
                let key: String = switch entry.key {
                case .string(let s): s
                case .objectPath(let p): p.rawValue
                default: ValueText.describe(entry.key)
                }
                return (key, JSONValue(entry.value))
            })
        case .structure(let fields): self = .array(fields.map(JSONValue.init))
        case .variant(let inner): self = JSONValue(inner)
        }
    }

    /// An `a{sv}` dictionary as an object, members sorted by key.
    static func dictionary(_ values: [String: DBusValue]) -> JSONValue {
        sorted(values.mapValues(JSONValue.init))
    }

    /// The compact JSON text.
    var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let v): out += v ? "true" : "false"
        case .int(let v): out += String(v)
        case .uint(let v): out += String(v)
        case .double(let v):
            if !v.isFinite {
                out += "null"
            } else if v == v.rounded(), abs(v) < 1e15 {
                out += String(Int64(v))
            } else {
                out += String(v)
            }
        case .string(let v): Self.quote(v, into: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                Self.quote(key, into: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    private static func quote(_ string: String, into out: inout String) {
        out += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
