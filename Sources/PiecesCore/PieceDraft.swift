import ContractCore

/// A time signature: beats per bar over the note value of a beat.
public struct TimeSignature: Sendable, Hashable {
    public let upper: UInt8
    public let lower: UInt8

    public static let uppers: ClosedRange<UInt8> = 1...16
    public static let lowers: [UInt8] = [2, 4, 8, 16]

    public init(upper: UInt8, lower: UInt8) throws(RuleViolation) {
        guard Self.uppers.contains(upper), Self.lowers.contains(lower) else {
            throw RuleViolation(.invalidTimeSignature, field: .timeSignatureUpper,
                                "\(upper)/\(lower) is not a time signature (upper 1..16, lower 2, 4, 8 or 16)")
        }
        self.upper = upper
        self.lower = lower
    }
}

/// A piece's key: unknown, atonal, or a scale of the 12 pitch classes (C..B) with its root.
public enum Tonality: Sendable, Hashable {
    case unknown
    case atonal
    case tonal(scale: [Bool], root: UInt8)

    public static let names = ["unknown", "atonal", "tonal"]

    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .atonal: "atonal"
        case .tonal: "tonal"
        }
    }

    /// `tonal` needs a 12-value scale with at least one pitch class and a root in it.
    public init(name: String, scale: [Bool]?, root: UInt8?) throws(RuleViolation) {
        switch name {
        case "unknown", "atonal":
            guard scale == nil, root == nil else {
                throw RuleViolation(.invalidTonality, field: .tonality, "\(name) takes neither Scale nor Root")
            }
            self = name == "unknown" ? .unknown : .atonal
        case "tonal":
            guard let scale, scale.count == 12 else {
                throw RuleViolation(.invalidTonality, field: .scale, "tonal needs 12 values (C..B), got \(scale?.count ?? 0)")
            }
            guard scale.contains(true) else {
                throw RuleViolation(.invalidTonality, field: .scale, "tonal needs at least one pitch class in the scale")
            }
            guard let root, root < 12 else {
                throw RuleViolation(.invalidTonality, field: .root, "tonal needs a Root of 0..11, got \(root.map(String.init) ?? "none")")
            }
            guard scale[Int(root)] else {
                throw RuleViolation(.invalidTonality, field: .root, "\(root) is not in the scale")
            }
            self = .tonal(scale: scale, root: root)
        default:
            throw RuleViolation(.invalidTonality, field: .tonality, "'\(name)' is not one of unknown, atonal, tonal")
        }
    }

    /// The scale as a 12-bit mask (bit n = pitch class n), 0 when not tonal.
    public var scaleMask: Int {
        guard case .tonal(let scale, _) = self else { return 0 }
        return scale.enumerated().reduce(0) { $0 | ($1.element ? 1 << $1.offset : 0) }
    }

    public var root: UInt8? {
        guard case .tonal(_, let root) = self else { return nil }
        return root
    }

    /// Rebuilds a stored tonality.
    public static func stored(name: String, scaleMask: Int, root: UInt8?) -> Tonality {
        switch name {
        case "atonal": .atonal
        case "tonal": .tonal(scale: (0..<12).map { scaleMask & (1 << $0) != 0 }, root: root ?? 0)
        default: .unknown
        }
    }
}

/// Everything a `Drop` says about a piece besides its assets, checked against Allihoopa's
/// rules. Fields that depend on the audio are checked again once it has been measured.
public struct PieceDraft: Sendable, Hashable {
    public static let titleLength: ClosedRange<Int> = 1...50
    public static let descriptionMaxLength = 140
    public static let lengths: ClosedRange<UInt64> = 1...1_200_000_000
    public static let tempos: ClosedRange<Double> = 1...999.999
    /// How far a given length may be from the mix stem's measured one.
    public static let lengthTolerance = 0.01

    public var title: String
    public var description: String
    public var lengthMicroseconds: UInt64?
    public var tempo: Double?
    public var loop: (start: UInt64, end: UInt64)? {
        get { loopStart.flatMap { start in loopEnd.map { (start, $0) } } }
        set {
            loopStart = newValue?.start
            loopEnd = newValue?.end
        }
    }
    public var loopStart: UInt64?
    public var loopEnd: UInt64?
    public var timeSignature: TimeSignature?
    public var basedOn: [String]
    public var tonality: Tonality
    public var listed: Bool
    public var attachmentMimeType: String?

    public init(title: String, description: String = "", lengthMicroseconds: UInt64? = nil, tempo: Double? = nil,
                loopStart: UInt64? = nil, loopEnd: UInt64? = nil, timeSignature: TimeSignature? = nil,
                basedOn: [String] = [], tonality: Tonality = .unknown, listed: Bool = true, attachmentMimeType: String? = nil) {
        self.title = title
        self.description = description
        self.lengthMicroseconds = lengthMicroseconds
        self.tempo = tempo
        self.loopStart = loopStart
        self.loopEnd = loopEnd
        self.timeSignature = timeSignature
        self.basedOn = basedOn
        self.tonality = tonality
        self.listed = listed
        self.attachmentMimeType = attachmentMimeType
    }

    /// The rules that need no audio.
    public func validate() throws(RuleViolation) {
        let titleScalars = title.unicodeScalars.count
        if titleScalars < Self.titleLength.lowerBound {
            throw RuleViolation(.titleTooShort, field: .title, "must have at least 1 character")
        }
        if titleScalars > Self.titleLength.upperBound {
            throw RuleViolation(.titleTooLong, field: .title, "\(titleScalars) characters, at most 50 allowed")
        }
        let descriptionScalars = description.unicodeScalars.count
        if descriptionScalars > Self.descriptionMaxLength {
            throw RuleViolation.invalidData(.description, "\(descriptionScalars) characters, at most 140 allowed")
        }
        if let lengthMicroseconds { try Self.checkLength(lengthMicroseconds, field: EarshotField.lengthMicroseconds.name) }
        if let tempo {
            if !(tempo >= Self.tempos.lowerBound) {
                throw RuleViolation(.tempoTooLow, field: .tempo, "\(tempo) BPM is below 1")
            }
            if !(tempo <= Self.tempos.upperBound) {
                throw RuleViolation(.tempoTooHigh, field: .tempo, "\(tempo) BPM is above 999.999")
            }
        }
        if (loopStart == nil) != (loopEnd == nil) {
            throw RuleViolation(.invalidLoopMarkers, field: loopStart == nil ? EarshotField.loopStartMicroseconds.name : EarshotField.loopEndMicroseconds.name,
                                "give both loop markers or neither")
        }
        if let loop {
            guard loop.start < loop.end else {
                throw RuleViolation(.invalidLoopMarkers, field: .loopStartMicroseconds,
                                    "start \(loop.start) must be before end \(loop.end)")
            }
            if let lengthMicroseconds, loop.end > lengthMicroseconds {
                throw RuleViolation(.invalidLoopMarkers, field: .loopEndMicroseconds,
                                    "end \(loop.end) is past the piece's length \(lengthMicroseconds)")
            }
        }
        if let mime = attachmentMimeType, mime.isEmpty || mime.utf8.count > 255 || !mime.contains("/") {
            throw RuleViolation.invalidData(.attachmentMimeType, "'\(mime)' is not a MIME type")
        }
    }

    static func checkLength(_ length: UInt64, field: String) throws(RuleViolation) {
        if length < lengths.lowerBound {
            throw RuleViolation(.pieceTooShort, field: field, "\(length) µs is shorter than 1 µs")
        }
        if length > lengths.upperBound {
            throw RuleViolation(.pieceTooLong, field: field, "\(length) µs is longer than 1200000000 µs (20 minutes)")
        }
    }

    /// The rules that need the mix stem's measured length; returns the length to store.
    public func validate(measuredMicroseconds measured: UInt64) throws(RuleViolation) -> UInt64 {
        try Self.checkLength(measured, field: EarshotField.mixStem.name)
        let length = lengthMicroseconds ?? measured
        if let given = lengthMicroseconds {
            let difference = given > measured ? given - measured : measured - given
            if Double(difference) > Double(measured) * Self.lengthTolerance {
                throw RuleViolation.invalidData(.lengthMicroseconds,
                                                "\(given) µs disagrees with the mix stem's \(measured) µs by more than 1%")
            }
        }
        if let loop, loop.end > length {
            throw RuleViolation(.invalidLoopMarkers, field: .loopEndMicroseconds, "end \(loop.end) is past the piece's length \(length)")
        }
        return length
    }
}
