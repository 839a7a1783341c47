import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Glibc
import Testing

/// SIGTERM (systemd stopping a unit) while each service works. Every service exits with
/// status 0 within a few seconds, logging "shutting down" and "stopped"; what was under way
/// ends in a way its owner sees before the service leaves the bus (a pass-thru's, an
/// alert's, a job's end signal; a drop's or a state change's reply), and after a restart
/// nothing half-done is left.
@Suite(.timeLimit(.minutes(3))) struct SigtermTests {
    static let prompt = Duration.seconds(4)
    private typealias SessionKeys = Session.Keys

    func expectCleanStop(_ process: ServiceProcess, since start: ContinuousClock.Instant, within limit: Duration = prompt,
                         sourceLocation: SourceLocation = #_sourceLocation) async {
        await expectExit(process, status: 0, within: limit, since: start, sourceLocation: sourceLocation)
        let log = process.logText
        #expect(log.contains("shutting down") && log.contains("stopped"), "\(log.suffix(1500))", sourceLocation: sourceLocation)
    }

    @Test func captureMidPassThru() async throws {
        try await ServiceStack.with(["earshot-capture"]) { stack in
            let capture = try #require(stack.process("earshot-capture"))
            let client = stack.client
            let recording = UnpluggedMicrophoneTests.Recording(try await client.earshot.capture.perform(AudioPassThruRequest(maxDurationMs: 20000)))
            let before = try await recording.audio(until: 6400)

            let stopped = ContinuousClock.now
            capture.signal(SIGTERM)
            let after = try await recording.audio()
            let result = try await recording.passThru.result
            #expect(result.resultCode == .aborted && result.reason == .cancel, "\(result)")
            let audio = before + after
            #expect(audio == Array(stack.microphone.prefix(audio.count)))
            await expectCleanStop(capture, since: stopped)
        }
    }

    @Test func alertsMidSpokenAlert() async throws {
        try await ServiceStack.with(["earshot-alerts"]) { stack in
            let alerts = try #require(stack.process("earshot-alerts"))
            let client = stack.client
            let speech = "This alert keeps talking for a good long while, so that the service is stopped in the middle of a sentence."
            var shown: [PresentedAlert] = []
            for title in ["Spoken", "Waiting"] {
                shown.append(try await client.earshot.alerts.show(Alert(text: title, audio: [.text(speech)])))
            }
            #expect(await eventually { (try? await shown[0].read(.state)) == .presenting })
            try await Task.sleep(for: .milliseconds(300))  // well into the speech

            let stopped = ContinuousClock.now
            alerts.signal(SIGTERM)
            for alert in shown {
                let result = try await alert.result
                #expect(!result.success && result.resultCode == .aborted && result.reason == .cancelled, "\(alert.path): \(result)")
            }
            await expectCleanStop(alerts, since: stopped)
        }
    }

    @Test func piecesMidDrop() async throws {
        try await ServiceStack.with(["earshot-pieces"]) { stack in
            var pieces = try #require(stack.process("earshot-pieces"))
            let store = StoreDirectory(url: stack.file("pieces"))
            let client = stack.client
            let stem = TestAudio.wav(seconds: 20, frequency: 262)
            let source = try SlowSource()
            let call = Task { try await client.drop(PieceDrop(title: "Finished before exit", mixStem: .descriptor(source.reader))) }
            source.write(Array(stem.prefix(stem.count / 2)))
            #expect(await eventually { store.largestStagedSize >= stem.count / 4 })

            let stopped = ContinuousClock.now
            pieces.signal(SIGTERM)
            #expect(await eventually { pieces.logText.contains("letting 1 call(s) under way finish") })
            // Meanwhile new work is refused.
            let other = try await stack.bus.connect()
            let refused = await expectDBusError("org.freedesktop.DBus.Error.Failed") {
                _ = try await other.drop(PieceDrop(title: "Too late", mixStemPath: "/nonexistent.wav"))
            }
            #expect(refused?.message.contains("stopping") == true)
            other.close()
            // The drop under way completes and is answered before the service leaves.
            source.write(Array(stem.dropFirst(stem.count / 2)))
            source.finish()
            let id = try await call.value
            await expectCleanStop(pieces, since: stopped)

            pieces = try await stack.launch("earshot-pieces")
            #expect(try await client.pieceIDs() == [id])
            #expect(try await client.mixStem(id) == stem)
            #expect(store.objects == [TestAudio.sha256(stem)])
            #expect(store.staged.isEmpty)

            // A drop whose data stops coming cannot hold the service up: it exits after its
            // grace period, the caller gets an error, and the next start sweeps what was staged.
            let stalled = try SlowSource()
            let stalledCall = Task { try await client.drop(PieceDrop(title: "Never finished", mixStem: .descriptor(stalled.reader))) }
            stalled.write(Array(stem.prefix(stem.count / 2)))
            #expect(await eventually { store.largestStagedSize >= stem.count / 4 })
            let stoppedAgain = ContinuousClock.now
            pieces.signal(SIGTERM)
            await expectCleanStop(pieces, since: stoppedAgain, within: .seconds(8))
            await #expect(throws: EarshotError.self) { _ = try await stalledCall.value }
            stalled.finish()
            #expect(pieces.logText.contains("still under way at exit"))

            pieces = try await stack.launch("earshot-pieces")
            #expect(try await client.pieceIDs() == [id])
            #expect(store.staged.isEmpty)
            #expect(store.objects == [TestAudio.sha256(stem)])
            #expect(pieces.logText.contains("1 staged file(s)"), "\(pieces.logText.suffix(1000))")
        }
    }

    @Test func sessionMidSetDesiredState() async throws {
        try await ServiceStack.with(["earshot-session"]) { stack in
            let service = try #require(stack.process("earshot-session"))
            let client = stack.client
            let requests = [
                DesiredSessionState(category: "playback", mode: "spokenAudio"),
                DesiredSessionState(category: "record", mode: "measurement", preferredInput: "mic"),
                DesiredSessionState(category: "playAndRecord", options: ["defaultToSpeaker"], mode: "voiceChat"),
            ]
            let session = client.earshot.session.timing(out: .seconds(10))
            // Calls answered one after another…
            var acknowledged: DesiredSessionState?
            for request in requests + requests {
                try await session.setDesiredState(request)
                acknowledged = request
            }
            // …then one that is being worked on (saved, applied to ALSA) when SIGTERM comes.
            let request = requests[0]
            let call = Task { try await session.setDesiredState(request) }
            try await Task.sleep(for: .milliseconds(1))
            let stopped = ContinuousClock.now
            service.signal(SIGTERM)
            if (try? await call.value) != nil { acknowledged = request }
            // Nothing is accepted once it is shutting down.
            #expect(await eventually { service.logText.contains("shutting down") })
            await #expect(throws: EarshotError.self) { try await session.setDesiredState(requests[1]) }
            let last = try #require(acknowledged)
            await expectCleanStop(service, since: stopped)

            // The file is whole JSON holding the last acknowledged state, with no temporary left.
            let saved = try Data(contentsOf: stack.file("session.json"))
            let json = try #require(try JSONSerialization.jsonObject(with: saved) as? [String: Any])
            let configuration = (json["desired"] as? [String: Any])?["configuration"] as? [String: Any]
            #expect(configuration?["category"] as? String == last.category)
            #expect(configuration?["mode"] as? String == last.mode)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: stack.bus.directory.path).filter { $0.hasSuffix(".tmp") }
            #expect(leftovers.isEmpty)
            // And the restarted service starts from it.
            _ = try await stack.launch("earshot-session")
            let desired = try await session.read(.desiredState)
            #expect(desired[SessionKeys.category.name]?.stringValue == last.category, "\(desired)")
            #expect(desired[SessionKeys.mode.name]?.stringValue == last.mode, "\(desired)")
        }
    }

    @Test func orchestratorMidJob() async throws {
        try await ServiceStack.with { stack in
            let orchestrator = try #require(stack.process("earshot-orchestrator"))
            let client = stack.client
            // (The capture service's Finished, broadcast, is watched as any client may watch it.)
            let passThruEnds = try await client.subscribe(MatchRule(sender: Service.capture, interface: Service.passThru,
                                                                    member: PassThruMembers.finished.name))
            let job = try await client.earshot.orchestrator.recordPiece(RecordPieceRequest(title: "Interrupted by a stop", maxDurationMs: 20000))
            #expect(await eventually { (try? await job.read(.state)) == .recording })
            try await Task.sleep(for: .milliseconds(300))

            let stopped = ContinuousClock.now
            orchestrator.signal(SIGTERM)
            let result = try await job.result
            #expect(result.resultCode == .aborted, "\(result)")
            #expect(result.pieceId.isEmpty, "\(result)")
            let passThru = try #require(await passThruEnds.next(timeout: .seconds(5)), "the pass-thru did not end")
            #expect(PassThruResult(finished: passThru.body)?.resultCode == .aborted)
            await expectCleanStop(orchestrator, since: stopped)

            // Nothing half-done: the capture is idle, no piece, no temporary audio file.
            #expect(try await client.earshot.capture.active() == nil)
            #expect(try await client.pieceCount() == 0)
            let temporary = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())
                .filter { $0.hasPrefix("earshot-job-\(orchestrator.pid)-") }
            #expect(temporary.isEmpty, "\(temporary)")
            _ = try await stack.launch("earshot-orchestrator")
            let services = try await client.earshot.orchestrator.services()
            #expect(services[Service.capture] != nil)
        }
    }
}
