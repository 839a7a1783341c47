import ContractCore

/// An alert as a client asked for it (`PresentAlert`), or speech only (`Speak`), once each
/// field has been read; `validate()` applies the rules that span fields.
public struct AlertRequest: Sendable, Equatable {
    public var text = ""
    public var secondaryText = ""
    public var tertiaryText = ""
    /// Seconds; nil or 0 means `DefaultTimeout`.
    public var timeoutSeconds: Double?
    public var audio: [SpeechChunk] = []
    public var playTone = false
    public var showWaitIndicator = false
    public var softButtons: [SoftButton] = []
    public var icon = ""
    public var priority = AlertPriority.normal
    /// Speech only (`Speak`): no display, no timeout; done when its audio ends.
    public var speechOnly = false
    /// The alert goes on when its owner leaves the bus (scripts whose client exits right
    /// after the call). Not a queue rule: the service decides what an owner leaving ends.
    public var outliveOwner = false

    public static let maxSoftButtons = 4

    public init() {}

    public var texts: [String] { [text, secondaryText, tertiaryText] }
    /// Whether the alert shows text of its own (`TertiaryText` alone does not count).
    public var hasText: Bool { !text.isEmpty || !secondaryText.isEmpty }

    /// The rules across fields: something to show or say, at most four buttons with
    /// distinct ids, text rules for every text, a timeout that is a number of seconds.
    public func validate() throws(RuleViolation) {
        for (field, value) in [(EarshotField.text.name, text), (EarshotField.secondaryText.name, secondaryText), (EarshotField.tertiaryText.name, tertiaryText)] {
            try TextRules.check(value, field: field, allowEmpty: true)
        }
        if !icon.isEmpty {
            guard icon.hasPrefix("/") else { throw .invalidData(.icon, "must be an absolute path") }
            try TextRules.check(icon, field: EarshotField.icon.name, maxLength: 4096)
        }
        if let timeoutSeconds {
            guard timeoutSeconds.isFinite, timeoutSeconds >= 0 else {
                throw .invalidData(.timeout, "\(timeoutSeconds) is not a number of seconds ≥ 0")
            }
        }
        if speechOnly {
            guard !audio.isEmpty else { throw .invalidData("chunks", "Speak needs at least one chunk") }
            return
        }
        guard hasText || !audio.isEmpty else {
            throw .invalidData(.text, "an alert needs Text, \(EarshotField.secondaryText.name) or a non-empty Audio (\(EarshotField.tertiaryText.name) alone is not enough)")
        }
        guard softButtons.count <= Self.maxSoftButtons else {
            throw .invalidData(.softButtons, "\(softButtons.count) buttons, at most \(Self.maxSoftButtons) allowed")
        }
        var seen = Set<UInt16>()
        for (index, button) in softButtons.enumerated() where !seen.insert(button.id).inserted {
            throw .invalidData("\(EarshotField.softButtons.name)[\(index)].Id", "id \(button.id) is used by an earlier button")
        }
    }
}
