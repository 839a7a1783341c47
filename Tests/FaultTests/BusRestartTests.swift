import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// The bus daemon dies under running services. Every service exits promptly with status 2
/// (`Restart=on-failure` starts it again), logging that it lost the bus; a new daemon at
/// the same address and the services started again bring back what was persisted (the
/// session's desired state, the stored pieces) and work end to end.
@Suite struct BusRestartTests {
    @Test func servicesExitWithStatusTwoAndComeBackWithTheirState() async throws {
        try await ServiceStack.with { stack in
            let client = stack.client
            _ = try await client.call(Service.session, Session.setDesiredState, [.vardict([
                Session.Keys.category.name: .string("playAndRecord"), Session.Keys.mode.name: .string("voiceChat"),
                Session.Keys.options.name: .strings(["defaultToSpeaker"]),
                Session.Keys.preferredInput.name: .string("mic"), Session.Keys.ioBufferDuration.name: .double(0.01),
            ])])
            let desired = try #require(try await client.property(Service.session, Session.desiredState))
            let stem = TestAudio.wav(seconds: 1, frequency: 330)
            let stemFile = stack.file("before.wav")
            try Data(stem).write(to: stemFile)
            let id = try await client.drop([PieceKeys.title.name: .string("Before the crash"),
                                            PieceKeys.mixStem.path.name: .string(stemFile.path)])

            let killed = ContinuousClock.now
            stack.bus.kill()
            for (executable, _) in ServiceStack.services {
                let process = try #require(stack.process(executable))
                await expectExit(process, status: 2, within: .seconds(5), since: killed)
                #expect(process.logText.contains("lost the bus"), "\(executable):\n\(process.logText.suffix(1000))")
            }

            try await stack.bus.restart()
            for (executable, _) in ServiceStack.services { _ = try await stack.launch(executable) }
            let again = try await stack.bus.connect()
            defer { again.close() }

            // What was persisted is back.
            #expect(try await again.property(Service.session, Session.desiredState) == desired)
            #expect(try await again.pieceCount() == 1)
            #expect(try await again.mixStem(id) == stem)

            // And everything works together: a whole RecordPiece job, on the session's input.
            let finished = try await again.subscribe(MatchRule(sender: Service.orchestrator, interface: Service.job,
                                                               member: Job.finished.name))
            let reply = try await again.call(Service.orchestrator, Orchestrator.recordPiece, [.vardict([
                Orchestrator.Keys.title.name: .string("After the restart"), Orchestrator.Keys.maxDuration.name: .uint32(800),
                Orchestrator.Keys.samplingRate.name: .uint32(16000),
            ])])
            let job = try #require(reply.first?.objectPathValue)
            var outcome: DBusMessage?
            while outcome == nil, let signal = await finished.next(timeout: .seconds(30)) {
                if signal.path == job { outcome = signal }
            }
            let ended = try #require(outcome, "the job did not finish")
            #expect(ended.body.first?.stringValue == "SUCCESS", "\(ended.body)")
            let pieceID = try #require(ended.body.count > 1 ? ended.body[1].stringValue : nil)
            #expect(try await again.pieceCount() == 2)
            // 0.8 s of the microphone (16 kHz, 16-bit mono) behind a WAV header.
            let recorded = try await again.mixStem(pieceID)
            #expect(Array(recorded.dropFirst(44)) == Array(stack.microphone.prefix(25600)))
            let capture = try #require(stack.process("earshot-capture"))
            #expect(capture.logText.contains("(the session's input)"), "\(capture.logText.suffix(1000))")
        }
    }
}
