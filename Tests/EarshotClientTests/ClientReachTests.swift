import ContractCore
@testable import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Testing

/// Every method and signal the contract declares has a typed way in through the client.
/// The test uses each public call of the client once, on a bus where no service runs (each
/// call is refused with ServiceUnknown, after the client has built and sent it; each stream
/// is subscribed), and compares what the client reached with the contract: a member added
/// to an interface without a call or stream here fails, naming it. It is also the
/// compile-time use of every call: a signature changed here fails to build.
@Suite struct ClientReachTests {
    static let id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

    @Test func everyDeclaredMethodAndSignalIsReachable() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let connection = try await bus.connect()
        defer { connection.close() }
        ClientReach.recording.store(true, ordering: .relaxed)
        let earshot = Earshot(connection: connection)
        let path = ObjectPath(declared: "/org/earshot/Nothing")

        // org.earshot.Capture1 and a pass-thru
        let capture = earshot.capture
        let request = AudioPassThruRequest(maxDurationMs: 1000)
        _ = try? await capture.start(request)
        _ = try? await capture.perform(request)
        _ = try? await capture.perform(request) { _ in }
        try? await capture.endActive()
        let passThru = capture.passThru(at: path)
        try? await passThru.done()
        try? await passThru.cancel()
        try? await passThru.retry()
        try? await passThru.end()
        _ = try? await passThru.openStream()

        // org.earshot.Alerts1 and an alert
        let alerts = earshot.alerts
        _ = try? await alerts.present(Alert(text: "x"))
        _ = try? await alerts.show(Alert(text: "x"))
        _ = try? await alerts.submit(Alert(text: "x"))
        _ = try? await alerts.speak([.text("x")])
        _ = try? await alerts.startSpeaking([.text("x")], options: SpeechOptions(playTone: true))
        _ = try? await alerts.submit(speaking: [.text("x")])
        let alert = alerts.alert(at: path)
        try? await alert.pressButton(1)
        try? await alert.dismiss()
        try? await alert.cancel()
        _ = try? await alert.buttonPresses()

        // org.earshot.Pieces1
        let pieces = earshot.pieces
        _ = try? await pieces.drop(PieceDrop(title: "x", mixStemPath: "/x.wav"))
        _ = try? await pieces.get(Self.id)
        _ = try? await pieces.list(PieceQuery())
        _ = try? await pieces.count()
        try? await pieces.delete(Self.id)
        _ = try? await pieces.lineage(Self.id)
        _ = try? await pieces.openMixStem(Self.id)
        _ = try? await pieces.openPreview(Self.id)
        _ = try? await pieces.openCoverImage(Self.id)
        _ = try? await pieces.openAttachment(Self.id)
        try? await pieces.exportMixStem(Self.id, to: "/tmp/x.wav")
        try? await pieces.exportPreview(Self.id, to: "/tmp/x.wav")
        try? await pieces.exportCoverImage(Self.id, to: "/tmp/x.png")
        _ = try? await pieces.exportAttachment(Self.id, to: "/tmp/x")
        _ = try? await pieces.changes()

        // org.earshot.Session1 and an activation
        let session = earshot.session
        try? await session.setDesiredState(DesiredSessionState(category: "playback"))
        _ = try? await session.state()
        _ = try? await session.inputs()
        _ = try? await session.activate(category: "playback")
        try? await session.activation(at: path).deactivate()
        _ = try? await session.events()

        // org.earshot.Orchestrator1 and a job
        let orchestrator = earshot.orchestrator
        _ = try? await orchestrator.startRecording(RecordPieceRequest(title: "x"))
        _ = try? await orchestrator.recordPiece(RecordPieceRequest(title: "x"))
        try? await orchestrator.job(at: path).cancel()
        _ = try? await orchestrator.serviceChanges()

        let declared = Set(EarshotContract.services.flatMap(\.interfaces).flatMap { interface in
            (interface.methods.map(\.name) + interface.signals.map(\.name)).map { interface.name + "." + $0 }
        })
        let unreached = declared.subtracting(ClientReach.reached)
        #expect(unreached.isEmpty, "declared, and no client call or stream reaches them: \(unreached.sorted())")
        #expect(declared.count > 30, "\(declared.count) members")
    }
}
