import Foundation
import EarshotDBus

/// D-Bus values as people read them: strings bare, numbers plain, arrays in brackets,
/// dictionaries as `key: value` lists, and `a{sv}` replies as aligned `Key  value` lines.
enum ValueText {
    static func describe(_ value: DBusValue) -> String {
        switch value {
        case .byte(let v): String(v)
        case .boolean(let v): v ? "true" : "false"
        case .int16(let v): String(v)
        case .uint16(let v): String(v)
        case .int32(let v): String(v)
        case .uint32(let v): String(v)
        case .int64(let v): String(v)
        case .uint64(let v): String(v)
        case .double(let v): number(v)
        case .string(let v): v
        case .objectPath(let v): v.rawValue
        case .signature(let v): v
        case .unixFD(let v): v.description
        case .bytes(let v): "\(v.count) bytes"
        case .array(.byte, let v): "\(v.count) bytes"
        case .array(_, let v): "[" + v.map(describe).joined(separator: ", ") + "]"
        case .dictionary(_, _, let entries):
            "{" + entries.map { "\(describe($0.key)): \(describe($0.value))" }.joined(separator: ", ") + "}"
        case .structure(let fields): "(" + fields.map(describe).joined(separator: ", ") + ")"
        case .variant(let inner): describe(inner)
        }
    }

    /// `text`, or `""` when it is empty (so an empty value does not look missing).
    static func visible(_ text: String) -> String { text.isEmpty ? "\"\"" : text }

    /// A double without a trailing `.0`, and with at most six decimals.
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        var text = String(format: "%.6f", value)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }

    /// `Key  value` lines, keys sorted and aligned; a nested `a{sv}` is flattened into
    /// `Key.Inner` lines.
    static func lines(_ values: [String: DBusValue]) -> [String] {
        var flat: [(String, String)] = []
        for key in values.keys.sorted() {
            let value = values[key]!
            if let nested = value.stringKeyedValue, case .dictionary(.string, .variant, _) = value {
                for inner in nested.keys.sorted() { flat.append(("\(key).\(inner)", describe(nested[inner]!))) }
            } else {
                flat.append((key, describe(value)))
            }
        }
        let width = flat.map(\.0.count).max() ?? 0
        return flat.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + visible($0.1) }
    }
}
