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
    // The keys of each request, as the method called declares them.
    private typealias CaptureKeys = CaptureContract.Manager.Keys
    private typealias AlertKeys = AlertsContract.Manager.Keys
    private typealias ButtonKeys = AlertsContract.Manager.SoftButtonKeys
    private typealias SessionKeys = SessionContract.Manager.Keys
    private typealias PieceKeys = PiecesContract.Manager.PieceKeys
    private typealias QueryKeys = PiecesContract.Manager.QueryKeys
    private typealias RecordKeys = OrchestratorContract.Manager.Keys

    public static func calls(for busName: String, material: FuzzMaterial) -> [FuzzCall] {
        let wave = material.wave
        func dict(_ entries: [String: DBusValue]) -> DBusValue { .vardict(entries) }
        func chunks(_ list: [(String, String)]) -> DBusValue {
            .array(.structure([.string, .string]), list.map { .structure([.string($0.0), .string($0.1)]) })
        }
        switch busName {
        case CaptureContract.busName:
            let manager: ObjectPath = "/org/earshot/Capture1"
            let base: [String: DBusValue] = [CaptureKeys.samplingRate.name: .uint32(16000), CaptureKeys.bitsPerSample.name: .uint32(16),
                                             CaptureKeys.audioType.name: .string("PCM"), CaptureKeys.maxDuration.name: .uint32(800)]
            return [
                FuzzCall(manager, busName, CaptureContract.Manager.performAudioPassThru.name, [dict(base)]),
                FuzzCall(manager, busName, CaptureContract.Manager.performAudioPassThru.name, [dict(base.merging([
                    CaptureKeys.chunkMs.name: .uint32(10), CaptureKeys.muteAudio.name: .boolean(false),
                    CaptureKeys.displayText1.name: .string("Speak now"), CaptureKeys.endOnSilenceMs.name: .uint32(300),
                    CaptureKeys.samplingRate.name: .string("16KHZ"), CaptureKeys.bitsPerSample.name: .string("8_BIT"),
                ]) { $1 })]),
                FuzzCall(manager, busName, CaptureContract.Manager.performAudioPassThru.name, [dict(base.merging([
                    CaptureKeys.initialPrompt.name: chunks([("TEXT", "Go"), ("SILENCE", "50")]),
                    CaptureKeys.outliveOwner.name: .boolean(true),
                ]) { $1 })]),
                FuzzCall(manager, busName, CaptureContract.Manager.performAudioPassThru.name, [dict(base.merging([
                    CaptureKeys.outputPath.name: .string(material.exportPaths[0]),
                ]) { $1 })]),
                FuzzCall(manager, busName, CaptureContract.Manager.endAudioPassThru.name),
            ]
        case AlertsContract.busName:
            let manager: ObjectPath = "/org/earshot/Alerts1"
            return [
                FuzzCall(manager, busName, AlertsContract.Manager.presentAlert.name, [dict([AlertKeys.text.name: .string("Fuel low")])]),
                FuzzCall(manager, busName, AlertsContract.Manager.presentAlert.name, [dict([
                    AlertKeys.text.name: .string("Incoming call"), AlertKeys.secondaryText.name: .string("Anna"),
                    AlertKeys.priority.name: .string("COMMUNICATION"),
                    AlertKeys.softButtons.name: .vardicts([
                        [ButtonKeys.id.name: .uint16(1), ButtonKeys.text.name: .string("Answer")],
                        [ButtonKeys.id.name: .uint16(2), ButtonKeys.text.name: .string("Decline"), ButtonKeys.highlighted.name: .boolean(true)],
                    ]),
                ])]),
                FuzzCall(manager, busName, AlertsContract.Manager.presentAlert.name, [dict([
                    AlertKeys.audio.name: chunks([("TEXT", "Turn left"), ("PRE_RECORDED", "POSITIVE_JINGLE"), ("FILE", wave)]),
                    AlertKeys.playTone.name: .boolean(true), AlertKeys.timeout.name: .double(3), AlertKeys.icon.name: .string(wave),
                ])]),
                FuzzCall(manager, busName, AlertsContract.Manager.speak.name, [chunks([("TEXT", "Say it"), ("SILENCE", "100")]), dict([:])]),
            ]
        case SessionContract.busName:
            let manager: ObjectPath = "/org/earshot/Session1"
            return [
                FuzzCall(manager, busName, SessionContract.Manager.setDesiredState.name, [dict([SessionKeys.category.name: .string("playback")])]),
                FuzzCall(manager, busName, SessionContract.Manager.setDesiredState.name, [dict([
                    SessionKeys.category.name: .string("playAndRecord"),
                    SessionKeys.options.name: .strings(["defaultToSpeaker", "mixWithOthers"]),
                    SessionKeys.mode.name: .string("voiceChat"), SessionKeys.active.name: .boolean(true),
                    SessionKeys.sampleRate.name: .double(16000), SessionKeys.ioBufferDuration.name: .double(0.02),
                    SessionKeys.preferredInput.name: .string("mic"),
                ])]),
                FuzzCall(manager, busName, SessionContract.Manager.getState.name),
                FuzzCall(manager, busName, SessionContract.Manager.listInputs.name),
                FuzzCall(manager, busName, SessionContract.Manager.activate.name, [dict([
                    SessionKeys.category.name: .string("playback"), SessionKeys.options.name: .strings(["duckOthers"]),
                ])]),
                FuzzCall(manager, busName, SessionContract.Manager.activate.name, [dict([SessionKeys.category.name: .string("record")])]),
            ]
        case PiecesContract.busName:
            let manager: ObjectPath = "/org/earshot/Pieces1"
            let waveFD = UnixFD(taking: open(wave, O_RDONLY | O_CLOEXEC))
            return [
                FuzzCall(manager, busName, PiecesContract.Manager.drop.name, [dict([
                    PieceKeys.title.name: .string("Take"), PieceKeys.mixStem.path.name: .string(wave), PieceKeys.tempo.name: .double(120),
                ])]),
                FuzzCall(manager, busName, PiecesContract.Manager.drop.name, [dict([
                    PieceKeys.title.name: .string("Loop"), PieceKeys.mixStem.fd.name: .unixFD(waveFD),
                    PieceKeys.timeSignatureUpper.name: .byte(3), PieceKeys.timeSignatureLower.name: .byte(4),
                    PieceKeys.tonality.name: .string("tonal"), PieceKeys.root.name: .byte(0),
                    PieceKeys.scale.name: .array(.boolean, (0..<12).map { .boolean([0, 2, 4, 5, 7, 9, 11].contains($0)) }),
                    PieceKeys.loopStartMicroseconds.name: .uint64(0), PieceKeys.loopEndMicroseconds.name: .uint64(500_000),
                    PieceKeys.description.name: .string("A loop"), PieceKeys.preview.path.name: .string(wave),
                ])]),
                FuzzCall(manager, busName, PiecesContract.Manager.list.name, [dict([:])]),
                FuzzCall(manager, busName, PiecesContract.Manager.list.name, [dict([
                    QueryKeys.tempoMin.name: .double(60), QueryKeys.tempoMax.name: .double(180),
                    QueryKeys.sortBy.name: .string("tempo"), QueryKeys.limit.name: .uint32(10),
                ])]),
            ]
        case OrchestratorContract.busName:
            let manager: ObjectPath = "/org/earshot/Orchestrator1"
            return [
                FuzzCall(manager, busName, OrchestratorContract.Manager.recordPiece.name, [dict([
                    RecordKeys.title.name: .string("Idea"), RecordKeys.maxDuration.name: .uint32(600),
                ])]),
                FuzzCall(manager, busName, OrchestratorContract.Manager.recordPiece.name, [dict([
                    RecordKeys.title.name: .string("Hum"), RecordKeys.prompt.name: .string("Go"),
                    RecordKeys.maxDuration.name: .uint32(400),
                    // RecordPiece takes the piece's metadata as Drop declares it (PiecesContract.Manager.metadataKeys).
                    PieceKeys.tempo.name: .double(90), RecordKeys.outliveOwner.name: .boolean(true),
                ])]),
            ]
        default:
            return []
        }
    }
}
