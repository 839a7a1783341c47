/// The contract's rules for every text field a client sends (capture display texts,
/// alert texts, speech chunks): at most `maxLength` characters, no tab or newline, and
/// not whitespace only.
public enum TextRules {
    public static let defaultMaxLength = 500

    /// Checks `text` for `field`; an empty text passes when `allowEmpty`.
    public static func check(_ text: String, field: String, maxLength: Int = defaultMaxLength,
                             allowEmpty: Bool = false) throws(RuleViolation) {
        if text.isEmpty {
            guard allowEmpty else { throw .invalidData(field, "must not be empty") }
            return
        }
        guard text.count <= maxLength else {
            throw .invalidData(field, "\(text.count) characters, at most \(maxLength) allowed")
        }
        if text.contains("\t") || text.contains("\n") || text.contains("\r\n") {
            throw .invalidData(field, "must not contain a tab or a newline")
        }
        guard text.contains(where: { !$0.isWhitespace }) else {
            throw .invalidData(field, "must not be whitespace only")
        }
    }
}
