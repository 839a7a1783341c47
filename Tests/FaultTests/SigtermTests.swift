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
@Suite struct SigtermTests {
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
            let signals = try await client.subscribe(MatchRule(sender: Service.capture, interface: Service.passThru))
            let path = try #require(try await client.call(Service.capture, Capture.performAudioPassThru,
                                                          [UnpluggedMicrophoneTests.request(maxMs: 20000)]).first?.objectPathValue)
            let (before, early) = try await UnpluggedMicrophoneTests.collect(signals, path, until: 6400)
            #expect(early == nil)

            let stopped = ContinuousClock.now
            capture.signal(SIGTERM)
            let (after, finished) = try await UnpluggedMicrophoneTests.collect(signals, path)
            let body = try #require(finished)
            #expect(body.first == .string("ABORTED"))
            #expect(body.count > 2 && body[2].stringKeyedValue?[PassThru.FinishedKeys.reason.name] == .string("cancel"), "\(body)")
            let audio = before + after
            #expect(audio == Array(stack.microphone.prefix(audio.count)))
            await expectCleanStop(capture, since: stopped)
        }
    }

    @Test func alertsMidSpokenAlert() async throws {
        try await ServiceStack.with(["earshot-alerts"]) { stack in
            let alerts = try #require(stack.process("earshot-alerts"))
            let client = stack.client
            let completions = try await client.subscribe(MatchRule(sender: Service.alerts, interface: Service.alert,
                                                                   member: Alert.completed.name))
            let speech = "This alert keeps talking for a good long while, so that the service is stopped in the middle of a sentence."
            var paths: [ObjectPath] = []
            for title in ["Spoken", "Waiting"] {
                let reply = try await client.call(Service.alerts, Alerts.presentAlert, [.vardict([
                    Alerts.Keys.text.name: .string(title),
                    Alerts.Keys.audio.name: .array(.structure([.string, .string]), [.structure([.string("TEXT"), .string(speech)])]),
                ])])
                paths.append(try #require(reply.first?.objectPathValue))
            }
            #expect(await eventually {
                (try? await client.property(Service.alerts, Alert.state, path: paths[0], interface: Service.alert)) == .string("presenting")
            })
            try await Task.sleep(for: .milliseconds(300))  // well into the speech

            let stopped = ContinuousClock.now
            alerts.signal(SIGTERM)
            var ended: [ObjectPath: [DBusValue]] = [:]
            while ended.count < 2, let signal = await completions.next(timeout: .seconds(10)) {
                if let path = signal.path, paths.contains(path) { ended[path] = signal.body }
            }
            for path in paths {
                let body = try #require(ended[path], "no Completed for \(path)")
                #expect(body.first == .boolean(false))
                #expect(body.count > 1 && body[1] == .string("ABORTED"))
                #expect(body.count > 2 && body[2].stringKeyedValue?[Alert.CompletionKeys.reason.name] == .string("cancelled"), "\(body)")
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
            let call = Task { try await client.drop([PieceKeys.title.name: .string("Finished before exit"),
                                                     PieceKeys.mixStem.fd.name: .unixFD(source.reader)]) }
            source.write(Array(stem.prefix(stem.count / 2)))
            #expect(await eventually { store.largestStagedSize >= stem.count / 4 })

            let stopped = ContinuousClock.now
            pieces.signal(SIGTERM)
            #expect(await eventually { pieces.logText.contains("letting 1 call(s) under way finish") })
            // Meanwhile new work is refused.
            let other = try await stack.bus.connect()
            let refused = await expectDBusError("org.freedesktop.DBus.Error.Failed") {
                _ = try await other.drop([PieceKeys.title.name: .string("Too late"),
                                          PieceKeys.mixStem.path.name: .string("/nonexistent.wav")])
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
            let stalledCall = Task { try await client.drop([PieceKeys.title.name: .string("Never finished"),
                                                            PieceKeys.mixStem.fd.name: .unixFD(stalled.reader)]) }
            stalled.write(Array(stem.prefix(stem.count / 2)))
            #expect(await eventually { store.largestStagedSize >= stem.count / 4 })
            let stoppedAgain = ContinuousClock.now
            pieces.signal(SIGTERM)
            await expectCleanStop(pieces, since: stoppedAgain, within: .seconds(8))
            await #expect(throws: DBusError.self) { _ = try await stalledCall.value }
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
            let session = try #require(stack.process("earshot-session"))
            let client = stack.client
            let requests: [[String: DBusValue]] = [
                [SessionKeys.category.name: .string("playback"), SessionKeys.mode.name: .string("spokenAudio")],
                [SessionKeys.category.name: .string("record"), SessionKeys.preferredInput.name: .string("mic"),
                 SessionKeys.mode.name: .string("measurement")],
                [SessionKeys.category.name: .string("playAndRecord"), SessionKeys.mode.name: .string("voiceChat"),
                 SessionKeys.options.name: .strings(["defaultToSpeaker"])],
            ]
            // Calls answered one after another…
            var acknowledged: [String: DBusValue]?
            for request in requests + requests {
                _ = try await client.call(Service.session, Session.setDesiredState, [.vardict(request)])
                acknowledged = request
            }
            // …then one that is being worked on (saved, applied to ALSA) when SIGTERM comes.
            let request = requests[0]
            let call = Task { try await client.call(Service.session, Session.setDesiredState, [.vardict(request)], timeout: .seconds(10)) }
            try await Task.sleep(for: .milliseconds(1))
            let stopped = ContinuousClock.now
            session.signal(SIGTERM)
            if (try? await call.value) != nil { acknowledged = request }
            // Nothing is accepted once it is shutting down.
            #expect(await eventually { session.logText.contains("shutting down") })
            await #expect(throws: DBusError.self) {
                _ = try await client.call(Service.session, Session.setDesiredState, [.vardict(requests[1])])
            }
            let last = try #require(acknowledged)
            await expectCleanStop(session, since: stopped)

            // The file is whole JSON holding the last acknowledged state, with no temporary left.
            let saved = try Data(contentsOf: stack.file("session.json"))
            let json = try #require(try JSONSerialization.jsonObject(with: saved) as? [String: Any])
            let configuration = (json["desired"] as? [String: Any])?["configuration"] as? [String: Any]
            #expect(configuration?["category"] as? String == last[SessionKeys.category.name]?.stringValue)
            #expect(configuration?["mode"] as? String == last[SessionKeys.mode.name]?.stringValue)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: stack.bus.directory.path).filter { $0.hasSuffix(".tmp") }
            #expect(leftovers.isEmpty)
            // And the restarted service starts from it.
            _ = try await stack.launch("earshot-session")
            let desired = try #require(try await client.property(Service.session, Session.desiredState)?.stringKeyedValue)
            #expect(desired[SessionKeys.category.name] == last[SessionKeys.category.name], "\(desired)")
            #expect(desired[SessionKeys.mode.name] == last[SessionKeys.mode.name], "\(desired)")
        }
    }

    @Test func orchestratorMidJob() async throws {
        try await ServiceStack.with { stack in
            let orchestrator = try #require(stack.process("earshot-orchestrator"))
            let client = stack.client
            let jobSignals = try await client.subscribe(MatchRule(sender: Service.orchestrator, interface: Service.job))
            let passThruEnds = try await client.subscribe(MatchRule(sender: Service.capture, interface: Service.passThru,
                                                                    member: PassThru.finished.name))
            let job = try #require(try await client.call(Service.orchestrator, Orchestrator.recordPiece, [.vardict([
                Orchestrator.Keys.title.name: .string("Interrupted by a stop"), Orchestrator.Keys.maxDuration.name: .uint32(20000),
            ])]).first?.objectPathValue)
            #expect(await eventually {
                (try? await client.property(Service.orchestrator, Job.state, path: job, interface: Service.job)) == .string("recording")
            })
            try await Task.sleep(for: .milliseconds(300))

            let stopped = ContinuousClock.now
            orchestrator.signal(SIGTERM)
            var finished: [DBusValue]?
            while finished == nil, let signal = await jobSignals.next(timeout: .seconds(10)) {
                if signal.path == job, signal.member == Job.finished.name { finished = signal.body }
            }
            let body = try #require(finished, "no Finished from the job")
            #expect(body.first == .string("ABORTED"), "\(body)")
            #expect(body.count > 1 && body[1] == .string(""))
            let passThru = try #require(await passThruEnds.next(timeout: .seconds(5)), "the pass-thru did not end")
            #expect(passThru.body.first == .string("ABORTED"))
            await expectCleanStop(orchestrator, since: stopped)

            // Nothing half-done: the capture is idle, no piece, no temporary audio file.
            #expect(try await client.property(Service.capture, Capture.active) == .objectPath(.root))
            #expect(try await client.pieceCount() == 0)
            let temporary = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())
                .filter { $0.hasPrefix("earshot-job-\(orchestrator.pid)-") }
            #expect(temporary.isEmpty, "\(temporary)")
            _ = try await stack.launch("earshot-orchestrator")
            let services = try await client.property(Service.orchestrator, Orchestrator.services)?.stringKeyedValue
            #expect(services?[Service.capture] != nil)
        }
    }
}
