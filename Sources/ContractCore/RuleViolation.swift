/// A request that breaks one of the contract's rules: which field, which rule, and the
/// error the contract gives it (one of Earshot's, or nil for the standard `InvalidArgs`).
public struct RuleViolation: Error, Sendable, Equatable, CustomStringConvertible {
    public let error: EarshotErrorName?
    public let field: String
    public let rule: String

    public init(_ error: EarshotErrorName, field: String, _ rule: String) {
        self.error = error
        self.field = field
        self.rule = rule
    }

    private init(invalidArgsOf field: String, _ rule: String) {
        error = nil
        self.field = field
        self.rule = rule
    }

    /// The same error and field with another rule.
    public init(copying violation: RuleViolation, _ rule: String) {
        error = violation.error
        field = violation.field
        self.rule = rule
    }

    public init(_ error: EarshotErrorName, field: EarshotField, _ rule: String) {
        self.init(error, field: field.name, rule)
    }

    /// `INVALID_DATA` for a named field.
    public static func invalidData(_ field: EarshotField, _ rule: String) -> RuleViolation {
        invalidData(field.name, rule)
    }

    /// The standard `InvalidArgs` for a named field.
    public static func invalidArgs(_ field: EarshotField, _ rule: String) -> RuleViolation {
        invalidArgs(field.name, rule)
    }

    /// `INVALID_DATA`: the common case.
    public static func invalidData(_ field: String, _ rule: String) -> RuleViolation {
        RuleViolation(.invalidData, field: field, rule)
    }

    /// The standard `org.freedesktop.DBus.Error.InvalidArgs`: a value out of range.
    public static func invalidArgs(_ field: String, _ rule: String) -> RuleViolation {
        RuleViolation(invalidArgsOf: field, rule)
    }

    /// The error's last name part: `InvalidData`, or `InvalidArgs` for the standard one.
    public var errorName: String { error?.shortName ?? "InvalidArgs" }

    /// The message as the contract shows it: `Field: rule`.
    public var message: String { "\(field): \(rule)" }
    public var description: String { "\(errorName): \(message)" }
}
