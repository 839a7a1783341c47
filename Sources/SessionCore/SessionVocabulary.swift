import ContractCore

/// A word of the session vocabulary: a canonical spelling, the other spellings accepted for
/// it (all compared case-insensitively), and the named error for anything else.
public protocol SessionWord: RawRepresentable, CaseIterable, Sendable, Hashable, Codable where RawValue == String {
    /// The key the word arrives under, e.g. `Category`.
    static var field: String { get }
    /// The contract's error name for a word that is none of these.
    static var errorName: EarshotErrorName { get }
    /// Spellings accepted besides the canonical one.
    var aliases: [String] { get }
}

extension SessionWord {
    public var aliases: [String] { [] }

    /// Every accepted spelling, lower-cased, mapped to its word.
    static var spellings: [String: Self] {
        var table: [String: Self] = [:]
        for word in allCases {
            table[word.rawValue.lowercased()] = word
            for alias in word.aliases { table[alias.lowercased()] = word }
        }
        return table
    }

    /// Reads `text` in any accepted spelling, case-insensitively.
    public static func parse(_ text: String, field: String = Self.field) throws(RuleViolation) -> Self {
        if let word = spellings[text.lowercased()] { return word }
        let known = allCases.map(\.rawValue).joined(separator: ", ")
        throw RuleViolation(errorName, field: field, "'\(text)' is not one of \(known)")
    }
}

/// The six AVAudioSession categories.
public enum SessionCategory: String, SessionWord {
    case ambient, soloAmbient, playback, record, playAndRecord, multiRoute

    public static let field = EarshotField.category.name
    public static let errorName = EarshotErrorName.invalidCategory

    public var aliases: [String] {
        switch self {
        case .ambient, .playback: []
        case .soloAmbient: ["solo-ambient"]
        case .record: ["recording"]
        case .playAndRecord: ["play-and-record", "play_record"]
        case .multiRoute: ["multi-route"]
        }
    }

    /// Whether the category records, and so needs an input in its route.
    public var records: Bool { self == .record || self == .playAndRecord || self == .multiRoute }
}

/// The seven AVAudioSession modes.
public enum SessionMode: String, SessionWord {
    case `default`, voiceChat, videoRecording, measurement, moviePlayback, spokenAudio, gameChat

    public static let field = EarshotField.mode.name
    public static let errorName = EarshotErrorName.invalidMode

    public var aliases: [String] {
        switch self {
        case .default: []
        case .voiceChat: ["voice-chat"]
        case .videoRecording: ["video-recording"]
        case .measurement: []
        case .moviePlayback: ["movie-playback"]
        case .spokenAudio: ["spoken-audio"]
        case .gameChat: ["game-chat"]
        }
    }
}

/// The AVAudioSession category options.
public enum SessionOption: String, SessionWord, Comparable {
    case mixWithOthers, duckOthers, allowBluetooth, allowBluetoothA2DP, defaultToSpeaker
    case interruptSpokenAudioAndMixWithOthers, allowAirPlay

    public static let field = EarshotField.options.name
    public static let errorName = EarshotErrorName.invalidOption

    public var aliases: [String] {
        switch self {
        case .mixWithOthers: ["mix", "mix-with-others"]
        case .duckOthers: ["duck", "duck-others"]
        case .allowBluetooth: ["bt", "allow-bluetooth"]
        case .allowBluetoothA2DP: ["a2dp", "allow-bluetooth-a2dp"]
        case .defaultToSpeaker: ["speaker", "default-to-speaker"]
        case .interruptSpokenAudioAndMixWithOthers: ["interruptspokes", "interrupt-spoken-audio-and-mix-with-others"]
        case .allowAirPlay: ["airplay", "allow-airplay"]
        }
    }

    /// Declaration order, so option lists read the same way every time.
    public static func < (lhs: SessionOption, rhs: SessionOption) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// Input orientations: the stereo orientations of the reference, and its legacy
/// data-source orientations.
public enum InputOrientation: String, SessionWord {
    case none, portrait, portraitUpsideDown, landscapeLeft, landscapeRight
    case front, back, top, bottom, left, right, faceUp, faceDown

    public static let field = EarshotField.inputOrientation.name
    public static let errorName = EarshotErrorName.invalidOrientation

    public var aliases: [String] {
        switch self {
        case .portraitUpsideDown: ["portrait-upside-down"]
        case .landscapeLeft: ["landscape-left"]
        case .landscapeRight: ["landscape-right"]
        case .faceUp: ["face-up"]
        case .faceDown: ["face-down"]
        default: []
        }
    }
}

/// Microphone polar patterns.
public enum PolarPattern: String, SessionWord {
    case stereo, cardioid, omnidirectional, subcardioid

    public static let field = EarshotField.polarPattern.name
    public static let errorName = EarshotErrorName.invalidPolarPattern

    /// Channels a capture with this pattern records.
    public var channels: UInt32 { self == .stereo ? 2 : 1 }

    /// The patterns an input with at most `maxChannels` channels can give.
    public static func offered(maxChannels: UInt32) -> [PolarPattern] {
        allCases.filter { $0.channels <= maxChannels }
    }
}
