/// An `a{sv}` request read against the keys its method declares (`OptionKey`): the one
/// reader of every Earshot request, on the service side and in the client's check before
/// sending.
///
/// Reading refuses, in this order:
/// - a value that is not `a{sv}`, and a key given twice (`InvalidArgs`);
/// - for each declared key in order: a wrong D-Bus type (`InvalidArgs` naming the type
///   received and wanted; an integer key takes any integer type whose value fits, a
///   floating key any integer, a key with named aliases its name as `s`), then a broken
///   rule (a number outside its range, a string not among its allowed values, text too
///   long), refused with the key's declared error;
/// - a required key that is absent, then unknown keys (`InvalidArgs` listing the known).
///
/// A key that declares several errors (`TitleTooShort` and `TitleTooLong`) leaves its rules
/// to the domain core, which knows which error applies; rules said in words always are.
/// Values come back in the declared type, an alias as its canonical value, and an absent
/// key as its declared default.
///
///     let request = try call.request(CaptureContract.Manager.performAudioPassThru)
///     let maxMs: UInt32 = try request.require(Keys.maxDuration)
///     let mute: Bool = try request.require(Keys.muteAudio)     // declared default: true
///     let output: String? = try request.get(Keys.outputPath)
public struct DeclaredRequest: Sendable {
    public let keys: [OptionKey]
    /// Prefix for keys in messages, for nested dictionaries (`SoftButtons[2].`).
    public let context: String
    /// The given values, converted to their declared types.
    private let values: [String: DBusValue]

    public init(_ value: DBusValue, keys: [OptionKey], context: String = "") throws(DBusError) {
        guard case .dictionary(.string, .variant, let list) = value else {
            throw .invalidArgs("\(context.isEmpty ? "options" : String(context.dropLast())): got \(value.type.signature), wanted a{sv}")
        }
        var given: [String: DBusValue] = [:]
        for entry in list {
            guard case .string(let name) = entry.key, case .variant(let inner) = entry.value else { continue }
            guard given[name] == nil else { throw .invalidArgs("\(context)\(name): key given more than once") }
            given[name] = inner
        }
        var values: [String: DBusValue] = [:]
        for key in keys {
            guard let raw = given[key.name] else { continue }
            values[key.name] = try Self.read(raw, key, context: context)
        }
        for key in keys where key.required && values[key.name] == nil {
            throw .invalidArgs("\(context)\(key.name): required key is missing (wanted \(Self.wanted(key)))")
        }
        let unknown = given.keys.filter { name in !keys.contains { $0.name == name } }.sorted()
        if !unknown.isEmpty {
            let plural = unknown.count == 1 ? "key" : "keys"
            throw .invalidArgs("\(unknown.map { context + $0 }.joined(separator: ", ")): unknown \(plural) "
                + "(known: \(keys.map(\.name).sorted().joined(separator: ", ")))")
        }
        self.keys = keys
        self.context = context
        self.values = values
    }

    /// Whether the request gave `key` (a default does not count).
    public func has(_ key: OptionKey) -> Bool { values[key.name] != nil }

    /// The value given for `key`, else its declared default, else nil.
    public func get<T: DeclaredValue>(_ key: OptionKey, as _: T.Type = T.self) throws(DBusError) -> T? {
        guard keys.contains(key) else {
            throw .failed("internal error: \(context)\(key.name) is not a key of this request")
        }
        if let value = values[key.name] {
            guard let typed = T(declared: value) else {
                throw .failed("internal error: \(context)\(key.name) (\(key.signature)) read as \(T.self)")
            }
            return typed
        }
        guard let text = key.defaultValue else { return nil }
        guard let typed = T(default: text) else {
            throw .failed("internal error: \(context)\(key.name)'s default '\(text)' is not a \(T.self)")
        }
        return typed
    }

    /// The value given for `key`, else its declared default; a key with neither is an
    /// internal error (a required key's absence was refused when reading).
    public func require<T: DeclaredValue>(_ key: OptionKey, as _: T.Type = T.self) throws(DBusError) -> T {
        guard let value = try get(key, as: T.self) else {
            throw .failed("internal error: \(context)\(key.name) has no value and no default")
        }
        return value
    }

    /// A string key's value (or default) as one of a domain's words, e.g. an enum whose raw
    /// values are the key's allowed strings.
    public func word<Word: RawRepresentable>(_ key: OptionKey, as _: Word.Type = Word.self) throws(DBusError) -> Word?
    where Word.RawValue == String {
        guard let text = try get(key, as: String.self) else { return nil }
        guard let word = Word(rawValue: text) else {
            throw .failed("internal error: \(context)\(key.name) '\(text)' is allowed but has no \(Word.self)")
        }
        return word
    }

    /// The descriptor given for an `h` key.
    public func fd(_ key: OptionKey) throws(DBusError) -> UnixFD? {
        try get(key, as: DBusValue.self)?.unixFDValue
    }

    /// A nested `aa{sv}` key's dictionaries, each read against the key's own keys.
    public func dictionaries(_ key: OptionKey) throws(DBusError) -> [DeclaredRequest] {
        guard let value: DBusValue = try get(key), case .array(_, let elements) = value else { return [] }
        var result: [DeclaredRequest] = []
        for (index, element) in elements.enumerated() {
            result.append(try DeclaredRequest(element, keys: key.keys, context: "\(context)\(key.name)[\(index)]."))
        }
        return result
    }

    /// The given keys among `subset`, as they were read (for passing a request's keys on).
    public func given(_ subset: [OptionKey]) -> [String: DBusValue] {
        var result: [String: DBusValue] = [:]
        for key in subset { if let value = values[key.name] { result[key.name] = value } }
        return result
    }

    /// The key's declared error (or `InvalidArgs`) saying `<key>: <why>`.
    public func invalid(_ key: OptionKey, _ why: String) -> DBusError {
        DBusError(name: key.errors.first ?? DBusError.prefix + "InvalidArgs", message: "\(context)\(key.name): \(why)")
    }

    /// The key as messages name it, e.g. `SoftButtons[1].Id`.
    public func field(_ key: OptionKey) -> String { context + key.name }
}

// MARK: - Reading one value

extension DeclaredRequest {
    static let integerBounds: [String: (min: Int64, max: UInt64)] = [
        "y": (0, UInt64(UInt8.max)), "n": (Int64(Int16.min), UInt64(Int16.max)), "q": (0, UInt64(UInt16.max)),
        "i": (Int64(Int32.min), UInt64(Int32.max)), "u": (0, UInt64(UInt32.max)),
        "x": (Int64.min, UInt64(Int64.max)), "t": (0, UInt64.max),
    ]

    static func aliases(_ key: OptionKey) -> [String: String] {
        var table: [String: String] = [:]
        for case .oneOf(_, let aliases, _, _) in key.rules { table.merge(aliases) { a, _ in a } }
        return table
    }

    /// What a client should send, for messages.
    static func wanted(_ key: OptionKey) -> String {
        if integerBounds[key.signature] != nil {
            return aliases(key).isEmpty ? "\(key.signature) (or any integer type whose value fits)" : "\(key.signature) (or its name as s)"
        }
        return key.signature == "d" ? "d (or any integer type)" : key.signature
    }

    /// Whether the request's rules are checked here (see the type's documentation).
    static func checksRules(_ key: OptionKey) -> Bool { key.errors.count <= 1 }

    static func read(_ raw: DBusValue, _ key: OptionKey, context: String) throws(DBusError) -> DBusValue {
        let field = context + key.name
        func broken(_ why: String) -> DBusError {
            DBusError(name: key.errors.first ?? DBusError.prefix + "InvalidArgs", message: "\(field): \(why)")
        }
        let wrongType = DBusError.invalidArgs("\(field): got \(raw.type.signature), wanted \(wanted(key))")
        var value = raw
        // An integer key given by one of its names.
        if integerBounds[key.signature] != nil, let text = raw.stringValue {
            let table = aliases(key)
            guard !table.isEmpty else { throw wrongType }
            guard let canonical = table.first(where: { $0.key.lowercased() == text.lowercased() })?.value else {
                throw broken("'\(text)' is not \(choices(allowed(key) + table.keys.sorted()))")
            }
            value = .string(canonical)
            if let number = Int64(canonical) { value = .int64(number) } else if let number = UInt64(canonical) { value = .uint64(number) }
        }
        var typed = try convert(value, key, wrongType: wrongType, broken: broken)
        if checksRules(key) {
            try check(typed, key, broken: broken)
            typed = canonical(typed, key)
        }
        if key.signature == "a{sv}", !key.keys.isEmpty {
            _ = try DeclaredRequest(typed, keys: key.keys, context: field + ".")
        } else if key.signature == "aa{sv}", !key.keys.isEmpty, case .array(_, let elements) = typed {
            for (index, element) in elements.enumerated() {
                _ = try DeclaredRequest(element, keys: key.keys, context: "\(field)[\(index)].")
            }
        }
        return typed
    }

    /// The value in the key's declared type, or a wrong-type error.
    private static func convert(_ value: DBusValue, _ key: OptionKey, wrongType: DBusError,
                                broken: (String) -> DBusError) throws(DBusError) -> DBusValue {
        if let bounds = integerBounds[key.signature] {
            let shown: String
            let fits: Bool
            switch value {
            case .uint64(let v): shown = String(v); fits = v <= bounds.max
            default:
                guard let wide = value.integerValue else { throw wrongType }
                shown = String(wide)
                fits = wide >= bounds.min && (wide < 0 || UInt64(wide) <= bounds.max)
            }
            guard fits else {
                if checksRules(key), let range = range(key) { throw broken("\(shown) is outside \(format(range.bounds))\(range.unit)") }
                throw broken("\(shown) is outside \(bounds.min)..\(bounds.max)")
            }
            return integer(value, signature: key.signature)
        }
        if key.signature == "d" {
            let number: Double
            switch value {
            case .double(let v): number = v
            case .uint64(let v): number = Double(v)
            default:
                guard let wide = value.integerValue else { throw wrongType }
                number = Double(wide)
            }
            guard number.isFinite else { throw broken("\(number) is not a finite number") }
            return .double(number)
        }
        guard value.type.signature == key.signature else { throw wrongType }
        return value
    }

    /// An integer that fits `signature`'s type, as a value of that type.
    private static func integer(_ value: DBusValue, signature: String) -> DBusValue {
        let wide: Int64? = value.integerValue
        let unsigned: UInt64 = if case .uint64(let v) = value { v } else { UInt64(clamping: wide ?? 0) }
        switch signature {
        case "y": return .byte(UInt8(unsigned))
        case "n": return .int16(Int16(wide ?? 0))
        case "q": return .uint16(UInt16(unsigned))
        case "i": return .int32(Int32(wide ?? 0))
        case "u": return .uint32(UInt32(unsigned))
        case "x": return .int64(wide ?? 0)
        default: return .uint64(unsigned)
        }
    }

    private static func range(_ key: OptionKey) -> (bounds: ClosedRange<Double>, unit: String)? {
        for case .range(let bounds, let unit) in key.rules { return (bounds, unit.isEmpty ? "" : " " + unit) }
        return nil
    }

    private static func allowed(_ key: OptionKey) -> [String] {
        key.rules.flatMap { rule -> [String] in
            if case .oneOf(let values, _, _, _) = rule { return values }
            return []
        }
    }

    private static func check(_ value: DBusValue, _ key: OptionKey, broken: (String) -> DBusError) throws(DBusError) {
        for rule in key.rules {
            switch rule {
            case .range(let bounds, let unit):
                let suffix = unit.isEmpty ? "" : " " + unit
                if let number = value.doubleValue ?? value.integerValue.map(Double.init) ?? value.uint64Value.map(Double.init) {
                    if !bounds.contains(number) { throw broken("\(format(number)) is outside \(format(bounds))\(suffix)") }
                } else if let text = value.stringValue {
                    let count = Double(text.unicodeScalars.count)
                    if !bounds.contains(count) { throw broken("\(format(count)) characters, wanted \(format(bounds))\(suffix)") }
                }
            case .oneOf(let allowed, let aliases, let anyCase, let unit):
                func accepted(_ text: String) -> Bool {
                    let spellings = allowed + aliases.keys
                    return anyCase ? spellings.contains { $0.lowercased() == text.lowercased() } : spellings.contains(text)
                }
                let number = value.integerValue.map { String($0) } ?? value.uint64Value.map { String($0) }
                let texts: [String] = value.stringValue.map { [$0] } ?? value.stringArrayValue ?? number.map { [$0] } ?? []
                for text in texts where !accepted(text) {
                    let shown = number.map { $0 + (unit.isEmpty ? "" : " " + unit) } ?? "'\(text)'"
                    throw broken("\(shown) is not \(choices(allowed))")
                }
            case .maxLength(let limit):
                if let text = value.stringValue, text.count > limit { throw broken("\(text.count) characters, at most \(limit) allowed") }
            case .described:
                continue
            }
        }
    }

    /// A string (or each string of an array) in the spelling its `oneOf` rule gives it.
    private static func canonical(_ value: DBusValue, _ key: OptionKey) -> DBusValue {
        guard case .oneOf(let allowed, let aliases, _, _)? = key.rules.first(where: { if case .oneOf = $0 { true } else { false } }) else {
            return value
        }
        func spelled(_ text: String) -> String {
            if allowed.contains(text) { return text }
            let lower = text.lowercased()
            if let match = allowed.first(where: { $0.lowercased() == lower }) { return match }
            return aliases.first(where: { $0.key.lowercased() == lower })?.value ?? text
        }
        if let text = value.stringValue { return .string(spelled(text)) }
        if let texts = value.stringArrayValue { return .strings(texts.map(spelled)) }
        return value
    }

    /// `X`, `X or Y`, or `one of X, Y, Z`.
    private static func choices(_ values: [String]) -> String {
        switch values.count {
        case 1: values[0]
        case 2: "\(values[0]) or \(values[1])"
        default: "one of " + values.joined(separator: ", ")
        }
    }

    private static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    private static func format(_ bounds: ClosedRange<Double>) -> String { "\(format(bounds.lowerBound))..\(format(bounds.upperBound))" }
}

extension MethodCall {
    /// The method's `a{sv}` request (its first argument that declares keys), read against
    /// those keys.
    public func request(_ method: MethodDeclaration) throws(DBusError) -> DeclaredRequest {
        guard let index = method.inputs.firstIndex(where: { !$0.keys.isEmpty }) else {
            throw .failed("internal error: \(method.name) declares no request keys")
        }
        return try DeclaredRequest(try argument(index), keys: method.inputs[index].keys)
    }
}
