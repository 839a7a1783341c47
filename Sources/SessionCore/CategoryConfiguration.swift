import ContractCore

/// A category with its mode and options, checked against AVAudioSession's compatibility
/// rules. Used for the desired state and for each activation.
public struct CategoryConfiguration: Sendable, Hashable, Codable {
    public let category: SessionCategory
    public let mode: SessionMode
    /// The options as asked for (implied ones are in `effectiveOptions`).
    public let options: Set<SessionOption>

    /// Checks the combination; an option or mode the category does not allow is
    /// `IncompatibleOption` naming both sides.
    public init(category: SessionCategory, mode: SessionMode = .default, options: Set<SessionOption> = []) throws(RuleViolation) {
        for option in options.sorted() {
            if let allowed = Self.categories(allowing: option), !allowed.contains(category) {
                throw RuleViolation(.incompatibleOption, field: .options,
                                    "\(option.rawValue) needs category \(Self.list(allowed)), not \(category.rawValue)")
            }
        }
        if let allowed = Self.categories(allowing: mode), !allowed.contains(category) {
            throw RuleViolation(.incompatibleOption, field: .mode,
                                "\(mode.rawValue) needs category \(Self.list(allowed)), not \(category.rawValue)")
        }
        self.category = category
        self.mode = mode
        self.options = options
    }

    private enum CodingKeys: String, CodingKey { case category, mode, options }

    /// Decoding checks the rules too: a stored combination is as valid as a requested one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(category: try container.decode(SessionCategory.self, forKey: .category),
                      mode: try container.decode(SessionMode.self, forKey: .mode),
                      options: try container.decode(Set<SessionOption>.self, forKey: .options))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(category, forKey: .category)
        try container.encode(mode, forKey: .mode)
        try container.encode(options.sorted(), forKey: .options)
    }

    /// The categories an option is allowed with; nil when any.
    public static func categories(allowing option: SessionOption) -> [SessionCategory]? {
        switch option {
        case .mixWithOthers, .duckOthers, .interruptSpokenAudioAndMixWithOthers: [.playAndRecord, .playback, .multiRoute]
        case .defaultToSpeaker, .allowAirPlay: [.playAndRecord]
        case .allowBluetooth: [.record, .playAndRecord]
        case .allowBluetoothA2DP: nil
        }
    }

    /// The categories a mode is allowed with; nil when any.
    public static func categories(allowing mode: SessionMode) -> [SessionCategory]? {
        switch mode {
        case .default, .spokenAudio: nil
        case .voiceChat, .gameChat: [.playAndRecord]
        case .videoRecording: [.record, .playAndRecord]
        case .measurement: [.playback, .record, .playAndRecord]
        case .moviePlayback: [.playback]
        }
    }

    private static func list(_ categories: [SessionCategory]) -> String {
        let names = categories.map(\.rawValue)
        guard names.count > 1 else { return names.joined() }
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }

    /// The options in force: `duckOthers` and `interruptSpokenAudioAndMixWithOthers`
    /// imply `mixWithOthers`, and `ambient` always mixes.
    public var effectiveOptions: Set<SessionOption> {
        var effective = options
        if category == .ambient || options.contains(.duckOthers) || options.contains(.interruptSpokenAudioAndMixWithOthers) {
            effective.insert(.mixWithOthers)
        }
        return effective
    }

    /// Whether an activation with this configuration plays along with others; a
    /// non-mixable one interrupts the other non-mixable activations.
    public var mixable: Bool { effectiveOptions.contains(.mixWithOthers) }

    /// Whether an activation with this configuration lowers the others' volume.
    public var ducksOthers: Bool { options.contains(.duckOthers) }
}
