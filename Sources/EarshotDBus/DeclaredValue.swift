/// A Swift type a declared request key is read as: from a value already converted to the
/// key's declared D-Bus type, and from the key's documented default.
public protocol DeclaredValue: Sendable {
    init?(declared value: DBusValue)
    init?(default text: String)
}

extension Bool: DeclaredValue {
    public init?(declared value: DBusValue) {
        guard let v = value.boolValue else { return nil }
        self = v
    }
    public init?(default text: String) { self.init(text) }
}

extension String: DeclaredValue {
    public init?(declared value: DBusValue) {
        guard let v = value.stringValue else { return nil }
        self = v
    }

    /// A default is documented as written: `""` for the empty string, a bare word otherwise.
    public init?(default text: String) {
        self = text.count >= 2 && text.hasPrefix("\"") && text.hasSuffix("\"") ? String(text.dropFirst().dropLast()) : text
    }
}

extension Double: DeclaredValue {
    public init?(declared value: DBusValue) {
        guard let v = value.doubleValue else { return nil }
        self = v
    }
    public init?(default text: String) { self.init(text) }
}

/// Integers read from a key of exactly their D-Bus type (the reader converted whatever
/// integer type the caller sent).
public protocol DeclaredInteger: DeclaredValue, FixedWidthInteger {}

extension DeclaredInteger {
    public init?(declared value: DBusValue) {
        if case .uint64(let v) = value {
            guard let fitted = Self(exactly: v) else { return nil }
            self = fitted
            return
        }
        guard let wide = value.integerValue, let fitted = Self(exactly: wide) else { return nil }
        self = fitted
    }
    public init?(default text: String) { self.init(text, radix: 10) }
}

extension UInt8: DeclaredInteger {}
extension UInt16: DeclaredInteger {}
extension UInt32: DeclaredInteger {}
extension UInt64: DeclaredInteger {}
extension Int16: DeclaredInteger {}
extension Int32: DeclaredInteger {}
extension Int64: DeclaredInteger {}

extension Array: DeclaredValue where Element: DeclaredValue {
    /// Arrays of strings (`as`), booleans (`ab`) and the like; no documented default.
    public init?(declared value: DBusValue) {
        guard let elements = value.arrayValue else { return nil }
        var result: [Element] = []
        for element in elements {
            guard let typed = Element(declared: element) else { return nil }
            result.append(typed)
        }
        self = result
    }
    public init?(default text: String) { nil }
}

extension DBusValue: DeclaredValue {
    /// The value as read, in its declared type (for `a(ss)`, nested dictionaries and
    /// passing keys on); descriptors
    /// are read through `DeclaredRequest.fd(_:)`.
    public init?(declared value: DBusValue) { self = value }
    public init?(default text: String) { nil }
}
