import ContractCore
/// Keys and rules several requests share.
enum CommonKeys {
    static let invalidData = EarshotErrorName.invalidData.name
    static let textRule = OptionKey.Rule.described("no tab or newline, not whitespace only")

    static func text(_ name: String, doc: String, maxLength: Int = 500) -> OptionKey {
        OptionKey(name, "s", doc: doc, default: "\"\"", rules: [.maxLength(maxLength), textRule], error: invalidData)
    }

    static let outliveOwner = OptionKey(
        "OutliveOwner", "b", doc: "Run on when the caller leaves the bus (for scripts whose client exits after the call).",
        default: "false")

    static let speechRule = OptionKey.Rule.described(
        "(type, text) chunks; types TEXT, SAPI_PHONEMES, LHPLUS_PHONEMES, PRE_RECORDED (HELP_JINGLE, INITIAL_JINGLE, "
            + "LISTEN_JINGLE, POSITIVE_JINGLE, NEGATIVE_JINGLE), SILENCE (ms), FILE (a WAV, Ogg or FLAC path)")

    static let priority = OptionKey(
        "Priority", "s", doc: "Which alerts it preempts and how many one caller may present a minute.", default: "NORMAL",
        rules: [.oneOf(["NORMAL", "COMMUNICATION", "NAVIGATION", "VOICECOM", "EMERGENCY"])], error: invalidData)
}

extension OptionKey {
    /// A key the domain cores also name in their refusals: its name is the field's
    /// (ContractCore's `EarshotField`), so that it is spelled once for both.
    init(_ field: EarshotField, _ signature: String, doc: String, required: Bool = false, default defaultValue: String? = nil,
         rules: [Rule] = [], error: String? = nil, errors: [String] = [], keys: [OptionKey] = []) {
        self.init(field.name, signature, doc: doc, required: required, default: defaultValue, rules: rules, error: error,
                  errors: errors, keys: keys)
    }
}
