import EarshotContract
import EarshotDBus

/// A request's keys checked against the contract's schema before it is sent: unknown and
/// missing keys, D-Bus types (any integer type for an integer key, an integer for a
/// floating one, a declared alias for a key that has them), ranges, allowed strings and
/// lengths. Rules the contract states in words are left to the service.
enum RequestCheck {
    static func check(_ values: [String: DBusValue], against keys: [OptionKey], context: String = "") throws(EarshotError) {
        let declared = Dictionary(uniqueKeysWithValues: keys.map { ($0.name, $0) })
        for name in values.keys.sorted() where declared[name] == nil {
            throw EarshotError(name: DBusError.prefix + "InvalidArgs", message: "\(context)\(name): unknown key")
        }
        for key in keys {
            guard let value = values[key.name] else {
                if key.required {
                    throw EarshotError(name: DBusError.prefix + "InvalidArgs", message: "\(context)\(key.name): required key is missing")
                }
                continue
            }
            try check(value, key, context: context)
        }
    }

    private static func check(_ value: DBusValue, _ key: OptionKey, context: String) throws(EarshotError) {
        let field = context + key.name
        func broken(_ why: String) -> EarshotError {
            EarshotError(name: key.errors.first ?? DBusError.prefix + "InvalidArgs", message: "\(field): \(why)")
        }
        let aliases = key.rules.flatMap { rule -> [String] in
            if case .oneOf(_, let aliases) = rule { return aliases }
            return []
        }
        let numeric = ["y", "n", "q", "i", "u", "x", "t", "d"].contains(key.signature)
        let typeFits: Bool
        switch value {
        case .string(let text) where numeric:
            guard aliases.contains(where: { $0.caseInsensitiveEquals(text) }) else {
                throw EarshotError(name: DBusError.prefix + "InvalidArgs", message: "\(field): got s, wanted \(key.signature)")
            }
            return
        default:
            typeFits = numeric && key.signature != "d" ? value.integerValue != nil
                : key.signature == "d" ? (value.doubleValue != nil || value.integerValue != nil)
                : value.type.signature == key.signature
        }
        guard typeFits else {
            throw EarshotError(name: DBusError.prefix + "InvalidArgs", message: "\(field): got \(value.type.signature), wanted \(key.signature)")
        }
        for rule in key.rules {
            switch rule {
            case .range(let range, let unit):
                guard let number = value.doubleValue ?? value.integerValue.map(Double.init) ?? lengthOf(value) else { continue }
                if !range.contains(number) {
                    throw broken("\(format(number)) is outside \(format(range.lowerBound))..\(format(range.upperBound))\(unit.isEmpty ? "" : " \(unit)")")
                }
            case .oneOf(let allowed, let aliases):
                let texts = value.stringValue.map { [$0] } ?? value.integerValue.map { [String($0)] }
                    ?? value.arrayValue?.compactMap(\.stringValue) ?? []
                for text in texts where !(allowed + aliases).contains(where: { $0.caseInsensitiveEquals(text) }) {
                    throw broken("'\(text)' is not one of \(allowed.joined(separator: ", "))")
                }
            case .maxLength(let limit):
                if let text = value.stringValue, text.count > limit { throw broken("\(text.count) characters, at most \(limit)") }
            case .described:
                continue
            }
        }
        if !key.keys.isEmpty, let entries = value.arrayValue {
            for (index, entry) in entries.enumerated() {
                guard let dictionary = entry.stringKeyedValue else { continue }
                try check(dictionary, against: key.keys, context: "\(field)[\(index)].")
            }
        }
    }

    /// A string's length in Unicode scalars, for ranges over text (titles).
    private static func lengthOf(_ value: DBusValue) -> Double? {
        value.stringValue.map { Double($0.unicodeScalars.count) }
    }

    private static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}

extension String {
    func caseInsensitiveEquals(_ other: String) -> Bool { lowercased() == other.lowercased() }
}
