import ContractCore

/// One soft button of an alert, as validated from the request.
public struct SoftButton: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case text = "TEXT"
        case image = "IMAGE"
        case both = "BOTH"
    }

    public enum SystemAction: String, Sendable, CaseIterable {
        case defaultAction = "DEFAULT_ACTION"
        case stealFocus = "STEAL_FOCUS"
        case keepContext = "KEEP_CONTEXT"
    }

    public let id: UInt16
    public let text: String
    public let image: String
    public let kind: Kind
    public let highlighted: Bool
    public let systemAction: SystemAction

    /// `kind` nil means "from what is given": both text and image → BOTH, an image only →
    /// IMAGE, else TEXT. `field` names the button in errors (e.g. `SoftButtons[1]`).
    public init(id: UInt16, text: String = "", image: String = "", kind: Kind? = nil, highlighted: Bool = false,
                systemAction: SystemAction = .defaultAction, field: String) throws(RuleViolation) {
        if !text.isEmpty { try TextRules.check(text, field: "\(field).\(EarshotField.text.name)") }
        if !image.isEmpty {
            guard image.hasPrefix("/") else { throw .invalidData("\(field).\(EarshotField.image.name)", "must be an absolute path") }
            try TextRules.check(image, field: "\(field).\(EarshotField.image.name)", maxLength: 4096)
        }
        let resolved = kind ?? (text.isEmpty ? (image.isEmpty ? .text : .image) : (image.isEmpty ? .text : .both))
        switch resolved {
        case .text where text.isEmpty:
            throw .invalidData("\(field).\(EarshotField.text.name)", "a TEXT button needs a text")
        case .image where image.isEmpty:
            throw .invalidData("\(field).\(EarshotField.image.name)", "an IMAGE button needs an image path")
        case .both where text.isEmpty || image.isEmpty:
            throw .invalidData(field, "a BOTH button needs a text and an image path")
        default:
            break
        }
        self.id = id
        self.text = text
        self.image = image
        self.kind = resolved
        self.highlighted = highlighted
        self.systemAction = systemAction
    }
}
