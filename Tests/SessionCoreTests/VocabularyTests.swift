import ContractCore
import SessionCore
import Testing

@Suite struct VocabularyTests {
    @Test func everyCategorySpelling() throws {
        let spellings: [String: SessionCategory] = [
            "ambient": .ambient, "AMBIENT": .ambient,
            "soloAmbient": .soloAmbient, "solo-ambient": .soloAmbient, "SoloAmbient": .soloAmbient,
            "playback": .playback, "PlayBack": .playback,
            "record": .record, "recording": .record, "Recording": .record,
            "playAndRecord": .playAndRecord, "play-and-record": .playAndRecord, "play_record": .playAndRecord,
            "PLAYANDRECORD": .playAndRecord,
            "multiRoute": .multiRoute, "multi-route": .multiRoute, "MultiRoute": .multiRoute,
        ]
        for (text, category) in spellings {
            #expect(try SessionCategory.parse(text) == category, "\(text)")
        }
        for bad in ["", "solo_ambient", "play", "records", "playAndRecord ", "multi_route"] {
            #expect(throws: RuleViolation(.invalidCategory, field: .category,
                                          "'\(bad)' is not one of ambient, soloAmbient, playback, record, playAndRecord, multiRoute")) {
                try SessionCategory.parse(bad)
            }
        }
    }

    @Test func everyModeSpelling() throws {
        let spellings: [String: SessionMode] = [
            "default": .default, "DEFAULT": .default,
            "voiceChat": .voiceChat, "voice-chat": .voiceChat,
            "videoRecording": .videoRecording, "video-recording": .videoRecording,
            "measurement": .measurement, "Measurement": .measurement,
            "moviePlayback": .moviePlayback, "movie-playback": .moviePlayback,
            "spokenAudio": .spokenAudio, "spoken-audio": .spokenAudio,
            "gameChat": .gameChat, "game-chat": .gameChat, "GAME-CHAT": .gameChat,
        ]
        for (text, mode) in spellings {
            #expect(try SessionMode.parse(text) == mode, "\(text)")
        }
        for bad in ["", "voice_chat", "chat", "videoRecord"] {
            #expect(throws: RuleViolation.self) { try SessionMode.parse(bad) }
            do { _ = try SessionMode.parse(bad) } catch { #expect(error.errorName == EarshotErrorName.invalidMode.shortName) }
        }
    }

    @Test func everyOptionSpelling() throws {
        let spellings: [String: SessionOption] = [
            "mixWithOthers": .mixWithOthers, "mix": .mixWithOthers, "MIX": .mixWithOthers,
            "duckOthers": .duckOthers, "duck": .duckOthers,
            "allowBluetooth": .allowBluetooth, "bt": .allowBluetooth, "BT": .allowBluetooth,
            "allowBluetoothA2DP": .allowBluetoothA2DP, "a2dp": .allowBluetoothA2DP,
            "defaultToSpeaker": .defaultToSpeaker, "speaker": .defaultToSpeaker,
            "interruptSpokenAudioAndMixWithOthers": .interruptSpokenAudioAndMixWithOthers,
            "interruptspokes": .interruptSpokenAudioAndMixWithOthers, "InterruptSpokes": .interruptSpokenAudioAndMixWithOthers,
            "allowAirPlay": .allowAirPlay, "airplay": .allowAirPlay, "AirPlay": .allowAirPlay,
        ]
        for (text, option) in spellings {
            #expect(try SessionOption.parse(text) == option, "\(text)")
        }
        for bad in ["", "bluetooth", "mixing", "a2dp2"] {
            do {
                _ = try SessionOption.parse(bad)
                Issue.record("\(bad) was accepted")
            } catch {
                #expect(error.errorName == EarshotErrorName.invalidOption.shortName)
                #expect(error.field == EarshotField.options.name)
            }
        }
    }

    @Test func everyOrientationAndPolarPattern() throws {
        let orientations: [String: InputOrientation] = [
            "portrait": .portrait, "portraitUpsideDown": .portraitUpsideDown, "PORTRAITUPSIDEDOWN": .portraitUpsideDown,
            "landscapeLeft": .landscapeLeft, "landscapeRight": .landscapeRight, "none": .none,
            "front": .front, "back": .back, "top": .top, "bottom": .bottom, "left": .left, "right": .right,
            "faceUp": .faceUp, "faceDown": .faceDown, "FaceDown": .faceDown,
        ]
        for (text, orientation) in orientations {
            #expect(try InputOrientation.parse(text) == orientation, "\(text)")
        }
        do {
            _ = try InputOrientation.parse("sideways")
            Issue.record("sideways was accepted")
        } catch {
            #expect(error.errorName == EarshotErrorName.invalidOrientation.shortName)
        }
        let patterns: [String: PolarPattern] = [
            "stereo": .stereo, "Stereo": .stereo, "cardioid": .cardioid, "omnidirectional": .omnidirectional,
            "SUBCARDIOID": .subcardioid,
        ]
        for (text, pattern) in patterns {
            #expect(try PolarPattern.parse(text) == pattern, "\(text)")
        }
        do {
            _ = try PolarPattern.parse("hypercardioid")
            Issue.record("hypercardioid was accepted")
        } catch {
            #expect(error.errorName == EarshotErrorName.invalidPolarPattern.shortName)
        }
        #expect(PolarPattern.stereo.channels == 2)
        #expect(PolarPattern.offered(maxChannels: 1) == [.cardioid, .omnidirectional, .subcardioid])
        #expect(PolarPattern.offered(maxChannels: 2) == PolarPattern.allCases)
    }
}
