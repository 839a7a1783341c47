import ContractCore
@testable import EarshotClient
import EarshotContract
import EarshotDBus
import Glibc
import Testing

/// Every key a method's dictionary argument declares can be sent through the client's
/// request types: for each such argument of the contract (found by walking it, so a method
/// or key added there without a way in here fails), a request with every field set sends
/// exactly the declared keys.
@Suite struct RequestCoverageTests {
    /// The requests, every field set, by "Interface.Method.argument".
    static let requests: [String: [String: DBusValue]] = {
        var passThru = AudioPassThruRequest(maxDurationMs: 1000)
        passThru.initialPrompt = [SpeechChunk(kind: .text, text: "Go")]
        passThru.displayText1 = "1"
        passThru.displayText2 = "2"
        passThru.chunkMs = 100
        passThru.endOnSilenceMs = 500
        passThru.outliveOwner = true
        passThru.outputPath = "/tmp/x.wav"
        passThru.noiseSuppression = .high
        passThru.bargeIn = true
        passThru.echoCancel = true

        var button = Alert.SoftButton(id: 1, text: "OK", image: "/i.png")
        button.type = .both
        button.highlighted = true
        button.systemAction = .stealFocus
        var alert = Alert(text: "a", secondaryText: "b", audio: [SpeechChunk(kind: .text, text: "c")], softButtons: [button])
        alert.tertiaryText = "c"
        alert.timeout = 5
        alert.playTone = true
        alert.showWaitIndicator = true
        alert.icon = "/i.png"
        alert.priority = .emergency
        alert.outliveOwner = true

        var record = RecordPieceRequest(title: "t", prompt: "p", maxDurationMs: 1000)
        record.endOnSilenceMs = 500
        record.samplingRate = 16000
        record.bitsPerSample = 16
        record.displayText1 = "1"
        record.displayText2 = "2"
        record.outliveOwner = true
        record.metadata = RequestCoverageTests.fullMetadata

        var drop = PieceDrop(title: "t", mixStem: .path("/m.wav"), metadata: RequestCoverageTests.fullMetadata)
        drop.preview = .path("/p.ogg")
        drop.coverImage = .path("/c.png")
        drop.attachment = (PieceDrop.Asset.path("/a.bin"), "application/octet-stream")
        drop.authorUid = 0
        drop.lengthMicroseconds = 1_000_000

        var query = PieceQuery()
        query.titleContains = "t"
        query.tempoMin = 60
        query.tempoMax = 180
        query.timeSignature = (3, 4)
        query.tonality = .tonal
        query.root = 0
        query.basedOn = "p"
        query.author = "a"
        query.createdAfter = "2026-01-01T00:00:00Z"
        query.createdBefore = "2027-01-01T00:00:00Z"
        query.sortBy = .tempo
        query.descending = true
        query.offset = 1
        query.limit = 2

        var desired = DesiredSessionState(category: "playAndRecord", options: ["duckOthers"], active: true)
        desired.mode = "voiceChat"
        desired.sampleRate = 16000
        desired.ioBufferDuration = 0.02
        desired.preferredInput = "mic"
        desired.dataSourceName = "front"
        desired.polarPattern = "cardioid"
        desired.inputOrientation = "portrait"

        func name(_ interface: InterfaceDeclaration, _ method: MethodDeclaration, _ argument: Int) -> String {
            "\(interface.name).\(method.name).\(method.inputs[argument].name)"
        }
        typealias Capture = CaptureContract.Manager
        typealias Alerts = AlertsContract.Manager
        typealias Pieces = PiecesContract.Manager
        typealias Session = SessionContract.Manager
        typealias Orchestrator = OrchestratorContract.Manager
        return [
            name(Capture.interface, Capture.performAudioPassThru, 0): passThru.values,
            name(Alerts.interface, Alerts.presentAlert, 0): alert.values,
            name(Alerts.interface, Alerts.speak, 1): SpeechOptions(priority: .navigation, playTone: true, outliveOwner: true, playedAudio: UnixFD(taking: dup(2))).values,
            name(Orchestrator.interface, Orchestrator.recordPiece, 0): record.values,
            name(Pieces.interface, Pieces.drop, 0): drop.values,
            name(Pieces.interface, Pieces.list, 0): query.values,
            name(Session.interface, Session.setDesiredState, 0): desired.values,
            name(Session.interface, Session.activate, 0): SessionProxy.activationValues(category: "ambient", options: ["mixWithOthers"],
                                                                                         mode: "default", audioStream: "music"),
        ]
    }()

    static var fullMetadata: PieceMetadata {
        var metadata = PieceMetadata()
        metadata.description = "d"
        metadata.tempo = 120
        metadata.loopStartMicroseconds = 0
        metadata.loopEndMicroseconds = 1
        metadata.timeSignature = (3, 4)
        metadata.basedOn = ["p"]
        metadata.tonality = .tonal
        metadata.scale = [Bool](repeating: true, count: 12)
        metadata.root = 0
        metadata.listed = false
        return metadata
    }

    /// A drop sends an asset by path or by descriptor, not both: either stands for the key pair.
    static func sent(_ values: [String: DBusValue]) -> Set<String> {
        var names = Set(values.keys)
        for asset in PiecesContract.Manager.assets where names.contains(asset.path.name) { names.insert(asset.fd.name) }
        return names
    }

    @Test func everyDeclaredRequestKeyCanBeSent() {
        var seen = Set<String>()
        for service in EarshotContract.services {
            for interface in service.interfaces {
                for method in interface.methods {
                    for argument in method.inputs where argument.signature == "a{sv}" {
                        let name = "\(interface.name).\(method.name).\(argument.name)"
                        seen.insert(name)
                        guard let values = Self.requests[name] else {
                            Issue.record("\(name): no request type of the client sends it")
                            continue
                        }
                        let declared = Set(argument.keys.map(\.name))
                        let sent = Self.sent(values)
                        #expect(sent == declared, "\(name): not sent \(declared.subtracting(sent).sorted()), undeclared \(sent.subtracting(declared).sorted())")
                    }
                }
            }
        }
        #expect(Set(Self.requests.keys) == seen)
    }

    /// The dictionaries inside: each soft button's.
    @Test func everySoftButtonKeyCanBeSent() {
        var button = Alert.SoftButton(id: 1, text: "OK", image: "/i.png")
        button.type = .image
        let sent = Set(button.value.keys)
        #expect(sent == Set(AlertsContract.Manager.Keys.softButtons.keys.map(\.name)))
    }
}
