/// A request that breaks one of the contract's rules: which field, which rule, and the
/// error name the contract gives it (the suffix after `org.earshot.Error.`).
public struct RuleViolation: Error, Sendable, Equatable, CustomStringConvertible {
    public let errorName: String
    public let field: String
    public let rule: String

    public init(_ errorName: String, field: String, _ rule: String) {
        self.errorName = errorName
        self.field = field
        self.rule = rule
    }

    /// `INVALID_DATA`: the common case.
    public static func invalidData(_ field: String, _ rule: String) -> RuleViolation {
        RuleViolation("InvalidData", field: field, rule)
    }

    /// The message as the contract shows it: `Field: rule`.
    public var message: String { "\(field): \(rule)" }
    public var description: String { "\(errorName): \(message)" }
}
