/// One `(type, text)` chunk of speech, as `InitialPrompt` and alert `Audio` carry them.
public struct SpeechChunk: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case text = "TEXT"
        case sapiPhonemes = "SAPI_PHONEMES"
        case lhplusPhonemes = "LHPLUS_PHONEMES"
        case preRecorded = "PRE_RECORDED"
        case silence = "SILENCE"
        case file = "FILE"
    }

    /// The jingles a `PRE_RECORDED` chunk may name.
    public static let jingles = ["HELP_JINGLE", "INITIAL_JINGLE", "LISTEN_JINGLE", "POSITIVE_JINGLE", "NEGATIVE_JINGLE"]

    public let kind: Kind
    public let text: String

    public init(kind: Kind, text: String) {
        self.kind = kind
        self.text = text
    }

    /// Builds a chunk from the wire form, checking the type and the text rules for `field`
    /// (e.g. `InitialPrompt[0]`). FILE paths are checked for existence by the service that
    /// plays them, not here.
    public static func parse(type: String, text: String, field: String) throws(RuleViolation) -> SpeechChunk {
        guard let kind = Kind(rawValue: type) else {
            throw .invalidData(field, "type '\(type)' is not one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        switch kind {
        case .text, .sapiPhonemes, .lhplusPhonemes:
            try TextRules.check(text, field: field)
        case .preRecorded:
            guard jingles.contains(text) else {
                throw .invalidData(field, "'\(text)' is not one of \(jingles.joined(separator: ", "))")
            }
        case .silence:
            try TextRules.check(text, field: field, allowEmpty: true)
        case .file:
            guard text.hasPrefix("/") else { throw .invalidData(field, "a FILE chunk needs an absolute path") }
            try TextRules.check(text, field: field, maxLength: 4096)
        }
        return SpeechChunk(kind: kind, text: text)
    }

    /// At most this many chunks in one list (SmartDeviceLink's limit for TTS chunks).
    public static let maxChunks = 100

    /// Builds every chunk of a list, naming each by its place (`field[i]`) in errors.
    public static func parseAll(_ pairs: [(type: String, text: String)], field: String) throws(RuleViolation) -> [SpeechChunk] {
        guard pairs.count <= maxChunks else {
            throw .invalidData(field, "\(pairs.count) chunks, at most \(maxChunks) allowed")
        }
        var chunks: [SpeechChunk] = []
        for (index, pair) in pairs.enumerated() {
            chunks.append(try parse(type: pair.type, text: pair.text, field: "\(field)[\(index)]"))
        }
        return chunks
    }
}
