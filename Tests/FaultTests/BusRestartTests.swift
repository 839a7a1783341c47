import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// The bus daemon dies under running services. Every service exits promptly with status 2
/// (`Restart=on-failure` starts it again), logging that it lost the bus; a new daemon at
/// the same address and the services started again bring back what was persisted (the
/// session's desired state, the stored pieces) and work end to end.
@Suite(.timeLimit(.minutes(3))) struct BusRestartTests {
    @Test func servicesExitWithStatusTwoAndComeBackWithTheirState() async throws {
        try await ServiceStack.with { stack in
            let client = stack.client
            try await client.earshot.session.setDesiredState(DesiredSessionState(
                category: "playAndRecord", options: ["defaultToSpeaker"], mode: "voiceChat", ioBufferDuration: 0.01, preferredInput: "mic"))
            let desired = try await client.earshot.session.read(.desiredState)
            let stem = TestAudio.wav(seconds: 1, frequency: 330)
            let stemFile = stack.file("before.wav")
            try Data(stem).write(to: stemFile)
            let id = try await client.drop(PieceDrop(title: "Before the crash", mixStemPath: stemFile.path))

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
            #expect(try await again.earshot.session.read(.desiredState) == desired)
            #expect(try await again.pieceCount() == 1)
            #expect(try await again.mixStem(id) == stem)

            // And everything works together: a whole RecordPiece job, on the session's input.
            var request = RecordPieceRequest(title: "After the restart", maxDurationMs: 800)
            request.samplingRate = 16000
            let ended = try await again.earshot.orchestrator.recordPiece(request).result
            #expect(ended.resultCode == .success, "\(ended)")
            let pieceID = ended.pieceId
            #expect(try await again.pieceCount() == 2)
            // 0.8 s of the microphone (16 kHz, 16-bit mono) behind a WAV header.
            let recorded = try await again.mixStem(pieceID)
            #expect(Array(recorded.dropFirst(44)) == Array(stack.microphone.prefix(25600)))
            let capture = try #require(stack.process("earshot-capture"))
            #expect(capture.logText.contains("(the session's input)"), "\(capture.logText.suffix(1000))")
        }
    }
}
