/// One key of an `a{sv}` request: the D-Bus type it wants, whether it must be given, its
/// default, the rules its value must keep, and the error a broken rule is refused with.
public struct OptionKey: Sendable, Equatable {
    public let name: String
    public let signature: String
    public let doc: String
    public let required: Bool
    /// The value used when the key is absent, as the documentation shows it.
    public let defaultValue: String?
    public let rules: [Rule]
    /// The error names a value of the right type that breaks a rule may get.
    public let errors: [String]
    /// The keys of each dictionary, for `a{sv}` and `aa{sv}` values.
    public let keys: [OptionKey]

    public enum Rule: Sendable, Equatable {
        /// A number within bounds (integers of any width whose value fits, or a double).
        case range(ClosedRange<Double>, unit: String = "")
        /// One of these values (strings, or numbers written as strings); `aliases` maps other
        /// accepted spellings to the value each stands for; `anyCase` accepts any letter case;
        /// `unit` follows a number in messages.
        case oneOf([String], aliases: [String: String] = [:], anyCase: Bool = false, unit: String = "")
        /// At most this many characters.
        case maxLength(Int)
        /// A rule said in words (it involves other keys, files or the store).
        case described(String)
    }

    public init(_ name: String, _ signature: String, doc: String, required: Bool = false, default defaultValue: String? = nil,
                rules: [Rule] = [], error: String? = nil, errors: [String] = [], keys: [OptionKey] = []) {
        self.name = name
        self.signature = signature
        self.doc = doc
        self.required = required
        self.defaultValue = defaultValue
        self.rules = rules
        self.errors = (error.map { [$0] } ?? []) + errors
        self.keys = keys
    }
}
