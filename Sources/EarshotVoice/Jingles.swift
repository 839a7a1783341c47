/// The jingles a `PRE_RECORDED` chunk names, each its own short motif, synthesized rather
/// than recorded.
public enum Jingle: String, Sendable, CaseIterable {
    case help = "HELP_JINGLE"
    case initial = "INITIAL_JINGLE"
    case listen = "LISTEN_JINGLE"
    case positive = "POSITIVE_JINGLE"
    case negative = "NEGATIVE_JINGLE"

    /// The jingle a chunk's text names, or nil for any other text.
    public init?(name: String) {
        self.init(rawValue: name)
    }

    /// The notes of the jingle.
    public var motif: Motif {
        typealias Note = Motif.Note
        switch self {
        case .help:
            // A questioning turn: E5 D5 E5, then up to A5.
            return Motif(notes: [
                Note(frequency: 659.26, start: 0.00, duration: 0.14),
                Note(frequency: 587.33, start: 0.14, duration: 0.14),
                Note(frequency: 659.26, start: 0.28, duration: 0.14),
                Note(frequency: 880.00, start: 0.42, duration: 0.30),
            ])
        case .initial:
            // A rising C major arpeggio, C5 E5 G5 C6.
            return Motif(notes: [
                Note(frequency: 523.25, start: 0.00, duration: 0.12),
                Note(frequency: 659.26, start: 0.10, duration: 0.12),
                Note(frequency: 783.99, start: 0.20, duration: 0.12),
                Note(frequency: 1046.50, start: 0.30, duration: 0.30),
            ])
        case .listen:
            // Two quick high notes, G5 then D6: "your turn".
            return Motif(notes: [
                Note(frequency: 783.99, start: 0.00, duration: 0.09),
                Note(frequency: 1174.66, start: 0.11, duration: 0.18),
            ])
        case .positive:
            // A bright fifth and octave, C5 G5 together, then C6.
            return Motif(notes: [
                Note(frequency: 523.25, start: 0.00, duration: 0.16, level: 0.8),
                Note(frequency: 783.99, start: 0.00, duration: 0.16, level: 0.8),
                Note(frequency: 1046.50, start: 0.16, duration: 0.28),
            ])
        case .negative:
            // A low falling minor third, E4 to C#4, longer and darker.
            return Motif(notes: [
                Note(frequency: 329.63, start: 0.00, duration: 0.22),
                Note(frequency: 277.18, start: 0.24, duration: 0.40),
            ])
        }
    }

    /// The jingle as mono signed 16-bit samples at `sampleRate` Hz.
    public func render(sampleRate: Int) -> [Int16] {
        motif.render(sampleRate: sampleRate)
    }
}

/// The chime an alert's `PlayTone` plays before its audio.
public enum Tone {
    /// A single A5 bell note, 0.25 s.
    public static let chime = Motif(notes: [
        Motif.Note(frequency: 880, start: 0, duration: 0.25),
    ], peak: 0.45)

    /// The chime as mono signed 16-bit samples at `sampleRate` Hz.
    public static func render(sampleRate: Int) -> [Int16] {
        chime.render(sampleRate: sampleRate)
    }
}
