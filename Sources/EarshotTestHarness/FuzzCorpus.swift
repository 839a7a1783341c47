import EarshotContract
import EarshotDBus
import Foundation
import Glibc

/// One method call the fuzzer can make.
public struct FuzzCall: Sendable, CustomStringConvertible {
    public let path: ObjectPath
    public let interface: String
    public let member: String
    public let arguments: [DBusValue]

    public init(_ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) {
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }

    public var description: String {
        let shown = arguments.map { String($0.description.prefix(160)) }.joined(separator: ", ")
        return "\(path) \(interface).\(member)(\(shown))"
    }
}

/// Valid requests for each service, from the contract: the fuzzer sends them as they are
/// (to create real objects and reach the work behind the checks) and mutated (to reach
/// every check).
public enum FuzzCorpus {
    public static func calls(for busName: String, material: FuzzMaterial) -> [FuzzCall] {
        let wave = material.wave
        func dict(_ entries: [String: DBusValue]) -> DBusValue { .vardict(entries) }
        func chunks(_ list: [(String, String)]) -> DBusValue {
            .array(.structure([.string, .string]), list.map { .structure([.string($0.0), .string($0.1)]) })
        }
        switch busName {
        case CaptureContract.busName:
            let manager: ObjectPath = "/org/earshot/Capture1"
            let base: [String: DBusValue] = ["SamplingRate": .uint32(16000), "BitsPerSample": .uint32(16),
                                             "AudioType": .string("PCM"), "MaxDuration": .uint32(800)]
            return [
                FuzzCall(manager, busName, CaptureContract.Manager.performAudioPassThru.name, [dict(base)]),
                FuzzCall(manager, busName, CaptureContract.Manager.performAudioPassThru.name, [dict(base.merging([
                    "ChunkMs": .uint32(10), "MuteAudio": .boolean(false), "DisplayText1": .string("Speak now"),
                    "EndOnSilenceMs": .uint32(300), "SamplingRate": .string("16KHZ"), "BitsPerSample": .string("8_BIT"),
                ]) { $1 })]),
                FuzzCall(manager, busName, CaptureContract.Manager.performAudioPassThru.name, [dict(base.merging([
                    "InitialPrompt": chunks([("TEXT", "Go"), ("SILENCE", "50")]), "OutliveOwner": .boolean(true),
                ]) { $1 })]),
                FuzzCall(manager, busName, CaptureContract.Manager.performAudioPassThru.name, [dict(base.merging([
                    "OutputPath": .string(material.exportPaths[0]),
                ]) { $1 })]),
                FuzzCall(manager, busName, CaptureContract.Manager.endAudioPassThru.name),
            ]
        case AlertsContract.busName:
            let manager: ObjectPath = "/org/earshot/Alerts1"
            return [
                FuzzCall(manager, busName, AlertsContract.Manager.presentAlert.name, [dict(["Text": .string("Fuel low")])]),
                FuzzCall(manager, busName, AlertsContract.Manager.presentAlert.name, [dict([
                    "Text": .string("Incoming call"), "SecondaryText": .string("Anna"), "Priority": .string("COMMUNICATION"),
                    "SoftButtons": .vardicts([["Id": .uint16(1), "Text": .string("Answer")],
                                              ["Id": .uint16(2), "Text": .string("Decline"), "Highlighted": .boolean(true)]]),
                ])]),
                FuzzCall(manager, busName, AlertsContract.Manager.presentAlert.name, [dict([
                    "Audio": chunks([("TEXT", "Turn left"), ("PRE_RECORDED", "POSITIVE_JINGLE"), ("FILE", wave)]),
                    "PlayTone": .boolean(true), "Timeout": .double(3), "Icon": .string(wave),
                ])]),
                FuzzCall(manager, busName, AlertsContract.Manager.speak.name, [chunks([("TEXT", "Say it"), ("SILENCE", "100")]), dict([:])]),
            ]
        case SessionContract.busName:
            let manager: ObjectPath = "/org/earshot/Session1"
            return [
                FuzzCall(manager, busName, SessionContract.Manager.setDesiredState.name, [dict(["Category": .string("playback")])]),
                FuzzCall(manager, busName, SessionContract.Manager.setDesiredState.name, [dict([
                    "Category": .string("playAndRecord"), "Options": .strings(["defaultToSpeaker", "mixWithOthers"]),
                    "Mode": .string("voiceChat"), "Active": .boolean(true), "SampleRate": .double(16000),
                    "IOBufferDuration": .double(0.02), "PreferredInput": .string("mic"),
                ])]),
                FuzzCall(manager, busName, SessionContract.Manager.getState.name),
                FuzzCall(manager, busName, SessionContract.Manager.listInputs.name),
                FuzzCall(manager, busName, SessionContract.Manager.activate.name, [dict(["Category": .string("playback"), "Options": .strings(["duckOthers"])])]),
                FuzzCall(manager, busName, SessionContract.Manager.activate.name, [dict(["Category": .string("record")])]),
            ]
        case PiecesContract.busName:
            let manager: ObjectPath = "/org/earshot/Pieces1"
            let waveFD = UnixFD(taking: open(wave, O_RDONLY | O_CLOEXEC))
            return [
                FuzzCall(manager, busName, PiecesContract.Manager.drop.name, [dict(["Title": .string("Take"), "MixStemPath": .string(wave),
                                                          "Tempo": .double(120)])]),
                FuzzCall(manager, busName, PiecesContract.Manager.drop.name, [dict([
                    "Title": .string("Loop"), "MixStem": .unixFD(waveFD), "TimeSignatureUpper": .byte(3),
                    "TimeSignatureLower": .byte(4), "Tonality": .string("tonal"), "Root": .byte(0),
                    "Scale": .array(.boolean, (0..<12).map { .boolean([0, 2, 4, 5, 7, 9, 11].contains($0)) }),
                    "LoopStartMicroseconds": .uint64(0), "LoopEndMicroseconds": .uint64(500_000),
                    "Description": .string("A loop"), "PreviewPath": .string(wave),
                ])]),
                FuzzCall(manager, busName, PiecesContract.Manager.list.name, [dict([:])]),
                FuzzCall(manager, busName, PiecesContract.Manager.list.name, [dict(["TempoMin": .double(60), "TempoMax": .double(180),
                                                          "SortBy": .string("tempo"), "Limit": .uint32(10)])]),
            ]
        case OrchestratorContract.busName:
            let manager: ObjectPath = "/org/earshot/Orchestrator1"
            return [
                FuzzCall(manager, busName, OrchestratorContract.Manager.recordPiece.name, [dict(["Title": .string("Idea"), "MaxDuration": .uint32(600)])]),
                FuzzCall(manager, busName, OrchestratorContract.Manager.recordPiece.name, [dict([
                    "Title": .string("Hum"), "Prompt": .string("Go"), "MaxDuration": .uint32(400),
                    "Tempo": .double(90), "OutliveOwner": .boolean(true),
                ])]),
            ]
        default:
            return []
        }
    }
}
