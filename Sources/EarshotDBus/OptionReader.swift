/// Reads an `a{sv}` request the way every Earshot method does (contract section 0):
/// typed getters, integer widening from any integer type whose value fits, floating keys
/// that accept integers, ranges, required keys, and refusal of unknown keys.
///
/// Wrong types, unknown and duplicate keys are `org.freedesktop.DBus.Error.InvalidArgs`
/// naming the key, the type received and the type wanted. Values out of range use the
/// reader's `errorName` (e.g. `org.earshot.Error.InvalidData`) with messages such as
/// `MaxDuration: 0 is outside 1..1000000 ms`.
///
///     var options = try call.options(0, errorName: DBusError.earshotPrefix + "InvalidData")
///     let maxMs = try options.require("MaxDuration", .uint32(1...1_000_000, unit: "ms"))
///     let mute = try options.get("MuteAudio", .bool) ?? true
///     try options.finish()
public struct OptionReader: Sendable {
    public static let defaultErrorName = DBusError.prefix + "InvalidArgs"

    /// The error name used for values of the right type that break a rule.
    public let errorName: String
    /// Prefix for keys in messages, for nested dictionaries (`SoftButtons[2].`).
    public let context: String
    private let entries: [String: DBusValue]
    private var known: [String] = []

    /// Reads an `a{sv}` value; anything else is `InvalidArgs`.
    public init(_ value: DBusValue, errorName: String = defaultErrorName, context: String = "") throws(DBusError) {
        guard case .dictionary(.string, .variant, let list) = value else {
            throw .invalidArgs("\(context.isEmpty ? "options" : String(context.dropLast())): got \(value.type), wanted a{sv}")
        }
        var entries: [String: DBusValue] = [:]
        for entry in list {
            guard case .string(let key) = entry.key, case .variant(let inner) = entry.value else { continue }
            guard entries[key] == nil else { throw .invalidArgs("\(context)\(key): key given more than once") }
            entries[key] = inner
        }
        self.entries = entries
        self.errorName = errorName
        self.context = context
    }

    /// Wraps already-unpacked entries.
    public init(entries: [String: DBusValue], errorName: String = defaultErrorName, context: String = "") {
        self.entries = entries
        self.errorName = errorName
        self.context = context
    }

    /// Keys present in the request.
    public var keys: [String] { entries.keys.sorted() }

    public func has(_ key: String) -> Bool { entries[key] != nil }

    /// The value of an optional key, converted; nil when absent.
    public mutating func get<T>(_ key: String, _ type: OptionType<T>) throws(DBusError) -> T? {
        if !known.contains(key) { known.append(key) }
        guard let value = entries[key] else { return nil }
        switch type.convert(value, self, key) {
        case .value(let result):
            return result
        case .wrongType:
            throw .invalidArgs("\(context)\(key): got \(value.type), wanted \(type.wanted)")
        case .invalid(let why):
            throw invalid(key, why)
        case .failure(let error):
            throw error
        }
    }

    /// The value of a required key; absent is `InvalidArgs`.
    public mutating func require<T>(_ key: String, _ type: OptionType<T>) throws(DBusError) -> T {
        guard let value = try get(key, type) else {
            throw .invalidArgs("\(context)\(key): required key is missing (wanted \(type.wanted))")
        }
        return value
    }

    /// Refuses keys no getter asked for. Call after reading every key.
    public func finish() throws(DBusError) {
        let unknown = entries.keys.filter { !known.contains($0) }.sorted()
        guard unknown.isEmpty else {
            let plural = unknown.count == 1 ? "key" : "keys"
            throw .invalidArgs("\(unknown.map { context + $0 }.joined(separator: ", ")): unknown \(plural) (known: \(known.sorted().joined(separator: ", ")))")
        }
    }

    /// An error with this reader's error name: `<key>: <why>`.
    public func invalid(_ key: String, _ why: String) -> DBusError {
        DBusError(name: errorName, message: "\(context)\(key): \(why)")
    }
}

/// How to read one option: the D-Bus type wanted and the conversion and checks.
public struct OptionType<T>: Sendable {
    public enum Outcome {
        case value(T)
        case wrongType
        /// Right type, but breaks a rule (reported with the reader's error name).
        case invalid(String)
        case failure(DBusError)
    }

    /// What a client should send, for messages (e.g. `u (or any integer type whose value fits)`).
    public let wanted: String
    let convert: @Sendable (DBusValue, OptionReader, String) -> Outcome

    public init(wanted: String, convert: @escaping @Sendable (DBusValue, OptionReader, String) -> Outcome) {
        self.wanted = wanted
        self.convert = convert
    }

    /// Same value, with an extra check on it.
    public func checked(_ check: @escaping @Sendable (T) -> String?) -> OptionType<T> {
        let base = convert
        return OptionType(wanted: wanted) { value, reader, key in
            let outcome = base(value, reader, key)
            if case .value(let v) = outcome, let why = check(v) { return .invalid(why) }
            return outcome
        }
    }
}

func unitSuffix(_ unit: String?) -> String { unit.map { " " + $0 } ?? "" }

extension OptionType where T: FixedWidthInteger & Sendable {
    /// Any integer type whose value fits `T` (and `range`, when given).
    public static func integer(_ range: ClosedRange<T>? = nil, unit: String? = nil) -> OptionType<T> {
        let code = DBusType.integerCode(T.self)
        return OptionType(wanted: "\(code) (or any integer type whose value fits)") { value, _, _ in
            let fitted: T?
            let shown: String
            switch value {
            case .uint64(let v): fitted = T(exactly: v); shown = String(v)
            default:
                guard let wide = value.integerValue else { return .wrongType }
                fitted = T(exactly: wide)
                shown = String(wide)
            }
            let bounds = range ?? T.min...T.max
            guard let result = fitted, bounds.contains(result) else {
                return .invalid("\(shown) is outside \(bounds.lowerBound)..\(bounds.upperBound)\(unitSuffix(unit))")
            }
            return .value(result)
        }
    }
}

extension OptionType where T == UInt8 {
    public static func uint8(_ range: ClosedRange<UInt8>? = nil, unit: String? = nil) -> Self { .integer(range, unit: unit) }
}
extension OptionType where T == UInt16 {
    public static func uint16(_ range: ClosedRange<UInt16>? = nil, unit: String? = nil) -> Self { .integer(range, unit: unit) }
}
extension OptionType where T == UInt32 {
    public static func uint32(_ range: ClosedRange<UInt32>? = nil, unit: String? = nil) -> Self { .integer(range, unit: unit) }
}
extension OptionType where T == UInt64 {
    public static func uint64(_ range: ClosedRange<UInt64>? = nil, unit: String? = nil) -> Self { .integer(range, unit: unit) }
}
extension OptionType where T == Int32 {
    public static func int32(_ range: ClosedRange<Int32>? = nil, unit: String? = nil) -> Self { .integer(range, unit: unit) }
}
extension OptionType where T == Int64 {
    public static func int64(_ range: ClosedRange<Int64>? = nil, unit: String? = nil) -> Self { .integer(range, unit: unit) }
}

extension OptionType where T == Double {
    /// `d`, or any integer; finite, and within `range` when given.
    public static func double(_ range: ClosedRange<Double>? = nil, unit: String? = nil) -> Self {
        OptionType(wanted: "d (or any integer type)") { value, _, _ in
            let number: Double
            switch value {
            case .double(let v): number = v
            case .uint64(let v): number = Double(v)
            default:
                guard let wide = value.integerValue else { return .wrongType }
                number = Double(wide)
            }
            guard number.isFinite else { return .invalid("\(number) is not a finite number") }
            if let range, !range.contains(number) {
                return .invalid("\(number) is outside \(range.lowerBound)..\(range.upperBound)\(unitSuffix(unit))")
            }
            return .value(number)
        }
    }
}

extension OptionType where T == Bool {
    public static var bool: Self {
        OptionType(wanted: "b") { value, _, _ in value.boolValue.map { .value($0) } ?? .wrongType }
    }
}

extension OptionType where T == String {
    /// `s`, at most `maxLength` characters when given.
    public static func string(maxLength: Int? = nil) -> Self {
        OptionType(wanted: "s") { value, _, _ in
            guard let s = value.stringValue else { return .wrongType }
            if let maxLength, s.count > maxLength { return .invalid("\(s.count) characters, at most \(maxLength) allowed") }
            return .value(s)
        }
    }

    public static var string: Self { .string() }

    /// `s`, one of `choices` (matched exactly, or ignoring case); the result is the
    /// choice as spelled in `choices`.
    public static func oneOf(_ choices: [String], ignoringCase: Bool = false) -> Self {
        OptionType(wanted: "s") { value, _, _ in
            guard let s = value.stringValue else { return .wrongType }
            if let match = choices.first(where: { ignoringCase ? $0.lowercased() == s.lowercased() : $0 == s }) {
                return .value(match)
            }
            return .invalid("'\(s)' is not one of \(choices.joined(separator: ", "))")
        }
    }
}

extension OptionType where T == [String] {
    public static var strings: Self {
        OptionType(wanted: "as") { value, _, _ in value.stringArrayValue.map { .value($0) } ?? .wrongType }
    }
}

extension OptionType where T == [UInt8] {
    public static var bytes: Self {
        OptionType(wanted: "ay") { value, _, _ in value.bytesValue.map { .value($0) } ?? .wrongType }
    }
}

extension OptionType where T == ObjectPath {
    public static var objectPath: Self {
        OptionType(wanted: "o") { value, _, _ in value.objectPathValue.map { .value($0) } ?? .wrongType }
    }
}

extension OptionType where T == UnixFD {
    public static var fd: Self {
        OptionType(wanted: "h") { value, _, _ in value.unixFDValue.map { .value($0) } ?? .wrongType }
    }
}

extension OptionType where T == DBusValue {
    /// Exactly the D-Bus type `type`.
    public static func exactly(_ type: DBusType) -> Self {
        OptionType(wanted: type.signature) { value, _, _ in value.type == type ? .value(value) : .wrongType }
    }
}

extension OptionType where T == OptionReader {
    /// A nested `a{sv}`, read with the same error name; keys in messages are prefixed.
    public static var vardict: Self {
        OptionType(wanted: "a{sv}") { value, reader, key in
            guard value.type == .dictionary(key: .string, value: .variant) else { return .wrongType }
            do throws(DBusError) {
                return .value(try OptionReader(value, errorName: reader.errorName, context: reader.context + key + "."))
            } catch {
                return .failure(error)
            }
        }
    }
}

extension OptionType where T == [OptionReader] {
    /// `aa{sv}`, one reader per element (`Key[i].Field` in messages).
    public static var vardicts: Self {
        OptionType(wanted: "aa{sv}") { value, reader, key in
            guard case .array(.dictionary(key: .string, value: .variant), let elements) = value else { return .wrongType }
            do throws(DBusError) {
                var readers: [OptionReader] = []
                for (index, element) in elements.enumerated() {
                    readers.append(try OptionReader(element, errorName: reader.errorName,
                                                    context: reader.context + "\(key)[\(index)]."))
                }
                return .value(readers)
            } catch {
                return .failure(error)
            }
        }
    }
}

extension DBusType {
    static func integerCode<I: FixedWidthInteger>(_: I.Type) -> String {
        switch (I.isSigned, I.bitWidth) {
        case (false, 8): "y"
        case (true, 16): "n"
        case (false, 16): "q"
        case (true, 32): "i"
        case (false, 32): "u"
        case (true, 64): "x"
        case (false, 64): "t"
        default: "integer"
        }
    }
}
