import ContractCore
import SessionCore
import Testing

@Suite struct CompatibilityTests {
    /// Which categories each option is allowed with, as AVAudioSession has it.
    static let optionCategories: [SessionOption: Set<SessionCategory>] = [
        .mixWithOthers: [.playAndRecord, .playback, .multiRoute],
        .duckOthers: [.playAndRecord, .playback, .multiRoute],
        .interruptSpokenAudioAndMixWithOthers: [.playAndRecord, .playback, .multiRoute],
        .defaultToSpeaker: [.playAndRecord],
        .allowBluetooth: [.record, .playAndRecord],
        .allowAirPlay: [.playAndRecord],
        .allowBluetoothA2DP: Set(SessionCategory.allCases),
    ]

    static let modeCategories: [SessionMode: Set<SessionCategory>] = [
        .default: Set(SessionCategory.allCases),
        .spokenAudio: Set(SessionCategory.allCases),
        .voiceChat: [.playAndRecord],
        .gameChat: [.playAndRecord],
        .videoRecording: [.record, .playAndRecord],
        .measurement: [.playback, .record, .playAndRecord],
        .moviePlayback: [.playback],
    ]

    @Test func everyOptionWithEveryCategory() {
        for option in SessionOption.allCases {
            for category in SessionCategory.allCases {
                let allowed = Self.optionCategories[option]!.contains(category)
                do {
                    _ = try CategoryConfiguration(category: category, options: [option])
                    #expect(allowed, "\(option) with \(category) was accepted")
                } catch {
                    #expect(!allowed, "\(option) with \(category) was refused: \(error)")
                    #expect(error.errorName == EarshotErrorName.incompatibleOption.shortName)
                    #expect(error.field == EarshotField.options.name)
                    // Both sides are named.
                    #expect(error.rule.contains(option.rawValue) && error.rule.contains(category.rawValue), "\(error.rule)")
                }
            }
        }
    }

    @Test func everyModeWithEveryCategory() {
        for mode in SessionMode.allCases {
            for category in SessionCategory.allCases {
                let allowed = Self.modeCategories[mode]!.contains(category)
                do {
                    _ = try CategoryConfiguration(category: category, mode: mode)
                    #expect(allowed, "\(mode) with \(category) was accepted")
                } catch {
                    #expect(!allowed, "\(mode) with \(category) was refused: \(error)")
                    #expect(error.errorName == EarshotErrorName.incompatibleOption.shortName)
                    #expect(error.field == EarshotField.mode.name)
                    #expect(error.rule.contains(mode.rawValue) && error.rule.contains(category.rawValue), "\(error.rule)")
                }
            }
        }
    }

    @Test func messagesReadAsSentences() {
        #expect(throws: RuleViolation(.incompatibleOption, field: .options,
                                      "defaultToSpeaker needs category playAndRecord, not playback")) {
            try CategoryConfiguration(category: .playback, options: [.defaultToSpeaker])
        }
        #expect(throws: RuleViolation(.incompatibleOption, field: .mode,
                                      "measurement needs category playback, record or playAndRecord, not ambient")) {
            try CategoryConfiguration(category: .ambient, mode: .measurement)
        }
    }

    @Test func impliedMixing() throws {
        #expect(try CategoryConfiguration(category: .playback, options: [.duckOthers]).effectiveOptions == [.duckOthers, .mixWithOthers])
        #expect(try CategoryConfiguration(category: .playAndRecord, options: [.interruptSpokenAudioAndMixWithOthers])
            .effectiveOptions == [.interruptSpokenAudioAndMixWithOthers, .mixWithOthers])
        #expect(try CategoryConfiguration(category: .ambient).effectiveOptions == [.mixWithOthers])
        #expect(try CategoryConfiguration(category: .ambient).mixable)
        #expect(try !CategoryConfiguration(category: .soloAmbient).mixable)
        #expect(try !CategoryConfiguration(category: .playback, options: [.allowBluetoothA2DP]).mixable)
        #expect(try CategoryConfiguration(category: .playback, options: [.duckOthers]).ducksOthers)
    }

    @Test func numericRanges() throws {
        var state = DesiredState.initial
        state.sampleRate = 999.9
        #expect(throws: RuleViolation.invalidArgs(.sampleRate, "999.9 is outside 1000..384000 Hz")) { try state.validate() }
        state.sampleRate = 384_000
        state.ioBufferDuration = 0
        #expect(throws: RuleViolation.invalidArgs(.ioBufferDuration, "0.0 is outside 0.001..1 s")) { try state.validate() }
        state.ioBufferDuration = .nan
        #expect(throws: RuleViolation.self) { try state.validate() }
        state.ioBufferDuration = 0.001
        try state.validate()
    }
}
