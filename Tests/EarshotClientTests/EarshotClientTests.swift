import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Synchronization
import Testing

/// The typed proxies against the real services on a private bus.
@Suite struct EarshotClientTests {
    static func earshot(_ stack: ServiceStack) -> Earshot { Earshot(connection: stack.client) }

    @Test func aPassThruDeliversItsChunksToAHandlerAndAsASequence() async throws {
        try await ServiceStack.with(["earshot-capture"]) { stack in
            let earshot = Self.earshot(stack)
            var request = AudioPassThruRequest(samplingRate: 16000, bitsPerSample: 16, maxDurationMs: 500)
            request.chunkMs = 100
            let received = Mutex<[AudioChunk]>([])
            let result = try await earshot.capture.perform(request) { chunk in received.withLock { $0.append(chunk) } }
            #expect(result.resultCode == .success && result.success && result.reason == .timeout)
            #expect(result.framesCaptured == 8000)
            let chunks = received.withLock { $0 }
            #expect(chunks.map(\.sequence) == [0, 1, 2, 3, 4])
            #expect(chunks.flatMap(\.data) == Array(stack.microphone.prefix(16000)))

            // The same as a sequence, ended early by its owner.
            request.maxDurationMs = 60_000
            let passThru = try await earshot.capture.perform(request)
            var bytes = 0
            for await chunk in passThru {
                bytes += chunk.data.count
                if chunk.sequence == 2 { try await passThru.end() }
            }
            let ended = try await passThru.result
            #expect(ended.reason == .end && ended.resultCode == .success)
            #expect(bytes == Int(ended.framesCaptured) * 2)
        }
    }

    @Test func theContractsRulesAreCheckedBeforeSending() async throws {
        try await ServiceStack.with(["earshot-capture"]) { stack in
            let earshot = Self.earshot(stack)
            let error = await #expect(throws: EarshotError.self) {
                _ = try await earshot.capture.perform(AudioPassThruRequest(maxDurationMs: 0))
            }
            #expect(error?.isInvalidData == true)
            #expect(error?.message == "\(CaptureContract.Manager.Keys.maxDuration.name): 0 is outside 1..1000000 ms")
            var request = AudioPassThruRequest(samplingRate: 11025, maxDurationMs: 100)
            let rate = await #expect(throws: EarshotError.self) { _ = try await earshot.capture.perform(request) }
            // The same reader as the service's, so the same words.
            #expect(rate?.message == "\(CaptureContract.Manager.Keys.samplingRate.name): 11025 Hz is not one of 8000, 16000, 22050, 44100, 48000")
            request.samplingRate = 16000
            request.displayText1 = String(repeating: "x", count: 501)
            let text = await #expect(throws: EarshotError.self) { _ = try await earshot.capture.perform(request) }
            #expect(text?.message == "\(CaptureContract.PassThru.displayText1.name): 501 characters, at most 500 allowed")
            // Nothing reached the service.
            typealias Capture = CaptureContract.Manager
            let active = try await stack.client.call(destination: CaptureContract.busName,
                                                     path: ObjectPath(declared: CaptureContract.managerPath),
                                                     interface: "org.freedesktop.DBus.Properties", member: "Get",
                                                     [.string(Capture.interface.name), .string(Capture.active.name)])
            #expect(active.first?.variantValue == .objectPath("/"))
        }
    }

    @Test func alertsCompleteWithTheirResultAndTryAgainTime() async throws {
        try await ServiceStack.with(["earshot-capture", "earshot-alerts"]) { stack in
            let earshot = Self.earshot(stack)
            var alert = Alert(text: "Fuel low")
            alert.timeout = 3
            let shown = try await earshot.alerts.present(alert)
            #expect(shown.success && shown.resultCode == .success && shown.reason == .timeout)

            // While a pass-thru records, a NORMAL alert is refused with the time it has left.
            var request = AudioPassThruRequest(maxDurationMs: 3000)
            request.outliveOwner = true
            let recording = try await earshot.capture.perform(request)
            // Recording has begun, and the alert service has heard when it ends (the end is
            // announced just after the first chunk), once the second chunk is in.
            for await chunk in recording where chunk.sequence == 1 { break }
            let refused = try await withCheckedThrowingContinuation { (done: CheckedContinuation<AlertResult, any Error>) in
                earshot.alerts.present(Alert(text: "Not now")) { result in done.resume(with: result.mapError { $0 as any Error }) }
            }
            #expect(refused.resultCode == .rejected && !refused.success && refused.reason == .captureActive)
            #expect((1...3000).contains(refused.tryAgainTimeMs ?? 0))
            try await recording.end()
            _ = try await recording.result

            let spoken = try await earshot.alerts.speak([.text("Hello")])
            #expect(spoken.resultCode == .success)
            let toned = try await earshot.alerts.speak([.text("Hello")], options: SpeechOptions(priority: .navigation, playTone: true,
                                                                                               outliveOwner: true))
            #expect(toned.resultCode == .success, "\(toned)")
        }
    }

    @Test func piecesAreDroppedReadAndListed() async throws {
        try await ServiceStack.with(["earshot-pieces"]) { stack in
            let earshot = Self.earshot(stack)
            let wav = stack.file("riff.wav")
            let pcm = Array(stack.microphone.prefix(32000))
            try Data(PCMWave.header(sampleRate: 16000, channels: 1, bitsPerSample: 16, dataBytes: UInt64(pcm.count)) + pcm).write(to: wav)
            var piece = PieceDrop(title: "Riff", mixStemPath: wav.path)
            piece.tempo = 120
            let id = try await earshot.pieces.drop(piece)
            let stored = try await earshot.pieces.get(id)
            #expect(stored.title == "Riff" && stored.tempo == 120 && stored.lengthMicroseconds == 1_000_000)
            var query = PieceQuery()
            query.tempoMin = 100
            let listed = try await earshot.pieces.list(query)
            #expect(listed.total == 1 && listed.pieces.map(\.id) == [id])
            #expect(try await earshot.pieces.count() == 1)
            piece.title = ""
            let error = await #expect(throws: EarshotError.self) { _ = try await earshot.pieces.drop(piece) }
            #expect(error?.shortName == EarshotErrorName.titleTooShort.shortName)
            let missing = await #expect(throws: EarshotError.self) { _ = try await earshot.pieces.get("no-such-piece") }
            #expect(missing?.shortName == EarshotErrorName.pieceNotFound.shortName)
        }
    }

    @Test func theSessionAndAJobAreDrivenTyped() async throws {
        try await ServiceStack.with() { stack in
            let earshot = Self.earshot(stack)
            try await earshot.session.setDesiredState(DesiredSessionState(category: "playback", options: ["duckOthers"], active: true))
            let state = try await earshot.session.state()
            #expect(state.category == "playback" && state.options.contains("duckOthers") && state.active)
            let refused = await #expect(throws: EarshotError.self) {
                try await earshot.session.setDesiredState(DesiredSessionState(category: "karaoke"))
            }
            #expect(refused?.shortName == EarshotErrorName.invalidCategory.shortName)
            let claim = try await earshot.session.activate(category: "ambient")
            try await claim.deactivate()

            let services = try await earshot.orchestrator.services()
            #expect(services[CaptureContract.busName]?.running == true)
            let job = try await earshot.orchestrator.recordPiece(RecordPieceRequest(title: "Take", prompt: "Go", maxDurationMs: 1000))
            let result = try await job.result
            #expect(result.resultCode == .success && !result.pieceId.isEmpty)
            #expect(try await earshot.pieces.get(result.pieceId).title == "Take")
            // The finished job's own properties, read through it while its object lingers.
            #expect(try await job.read(.state) == .finished)
            #expect(try await job.read(.pieceId) == result.pieceId)
            #expect(try await job.read(.resultCode) == .success)
            #expect(try await job.read(.title) == "Take")
            #expect(try await job.read(.owner) == stack.client.uniqueName)
            #expect(try await job.read(.framesCaptured) > 0)
        }
    }

    /// The example under Examples/ records a memo and keeps it as a piece.
    @Test func theVoiceMemoExampleKeepsAMemo() async throws {
        try await ServiceStack.with(["earshot-alerts", "earshot-pieces"]) { stack in
            // A microphone read as fast as the file gives it: the 30 s memo takes no time.
            _ = try await stack.launch("earshot-capture", arguments: ["--device", "mic", "--pace", "device"])
            var environment = ProcessInfo.processInfo.environment
            environment["DBUS_SESSION_BUS_ADDRESS"] = stack.bus.address
            environment.merge(ALSATestDevices(configPath: stack.file("asound.conf")).environment) { _, new in new }
            let printed = try await ToolRun.run([ServiceProcess.productsDirectory.appendingPathComponent("voice-memo").path],
                                                environment: environment, timeout: .seconds(90))
            #expect(printed.hasPrefix("SUCCESS (timeout): 30000 ms kept as piece "), "\(printed)")
            #expect(try await Self.earshot(stack).pieces.count() == 1)
        }
    }

    /// The Python example records a memo the same way, with dbus-python: a spoken prompt,
    /// the audio through OpenStream's pipe, the WAV dropped by file descriptor.
    @Test func thePythonVoiceMemoExampleKeepsAMemo() async throws {
        try await ServiceStack.with(["earshot-alerts", "earshot-pieces"]) { stack in
            _ = try await stack.launch("earshot-capture", arguments: ["--device", "mic", "--pace", "device"])
            var environment = ProcessInfo.processInfo.environment
            environment["DBUS_SESSION_BUS_ADDRESS"] = stack.bus.address
            let script = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Examples/voice-memo.py").standardized
            let printed = try await ToolRun.run(["/usr/bin/python3", script.path, "--prompt", "Say your memo"],
                                                environment: environment, timeout: .seconds(90))
            #expect(printed.hasPrefix("SUCCESS: 30000 ms kept as piece "), "\(printed)")
            let id = String(printed.split(separator: " ").last ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            let piece = try await Self.earshot(stack).pieces.get(id)
            #expect(piece.title.hasPrefix("Memo ") && piece.lengthMicroseconds == 30_000_000, "\(piece)")
        }
    }
}
