import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(2))) struct CaptureEndingTests {
    /// A long pass-thru, paced in real time so there is time to end it.
    static let long = CaptureFixture.request(maxMs: 20_000) { $0.chunkMs = 50 }

    /// The owner's End and the user's Done, Cancel and Retry, each by the client's method.
    static func act(_ action: PassThruEndReason, on passThru: PassThru) async throws {
        switch action {
        case .end: try await passThru.end()
        case .done: try await passThru.done()
        case .cancel: try await passThru.cancel()
        default: try await passThru.retry()
        }
    }

    @Test(arguments: [
        (PassThruEndReason.end, ResultCode.success, true), (.done, .success, true), (.cancel, .aborted, false), (.retry, .retry, true),
    ])
    func userActionsEndWithTheirResult(action: PassThruEndReason, code: ResultCode, success: Bool) async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(1_000_000), pace: "realtime") { capture in
            var framesWhileRecording: [UInt64] = []
            var framesAtTheEnd: UInt64?
            let recording = try await capture.record(Self.long) { passThru in
                try await Task.sleep(for: .milliseconds(300))
                // FramesCaptured is read as it is now: it grows while recording.
                for _ in 0..<2 {
                    framesWhileRecording.append(try await passThru.read(.framesCaptured))
                    try await Task.sleep(for: .milliseconds(120))
                }
                try await Self.act(action, on: passThru)
                await expectDBusError(EarshotErrorName.rejected.name) { try await Self.act(action, on: passThru) }
                #expect(try await passThru.read(.resultCode) == code)
                #expect(try await passThru.read(.state) == .finished)
                framesAtTheEnd = try await passThru.read(.framesCaptured)
            }
            #expect(recording.result.resultCode == code && recording.result.success == success && recording.result.reason == action)
            #expect(recording.chunks.map(\.sequence) == Array(0..<UInt64(recording.chunks.count)))
            #expect(recording.result.framesCaptured == UInt64(recording.bytes.count / 2))
            #expect(framesAtTheEnd == recording.result.framesCaptured)
            #expect(framesWhileRecording.count == 2 && framesWhileRecording[0] > 0 && framesWhileRecording[1] > framesWhileRecording[0],
                    "\(framesWhileRecording)")
        }
    }

    @Test func endingKeepsTheAudioHeardSinceTheLastChunk() async throws {
        // One-second chunks (so one-second ALSA periods): ended 1.5 s in, the pass-thru
        // still delivers the half second the device captured after the first chunk.
        try await CaptureFixture.with(input: CaptureFixture.pattern(1_000_000), pace: "realtime") { capture in
            let request = CaptureFixture.request(maxMs: 20_000) { $0.chunkMs = 1000 }
            let started = ContinuousClock.now
            var endedAt = started
            let recording = try await capture.record(request) { passThru in
                try await Task.sleep(for: .milliseconds(1500))
                try await passThru.done()
                endedAt = ContinuousClock.now
            }
            #expect(recording.result.resultCode == .success && recording.result.reason == .done)
            // Whole chunks, then what was heard since the last: two chunks, unless a loaded
            // machine delayed Done past the second second.
            #expect(recording.chunks.count >= 2 && (recording.chunks.last?.data.count ?? 0) > 0)
            #expect(recording.chunks.dropLast().allSatisfy { $0.data.count == 32000 })
            let frames = recording.bytes.count / 2
            // At least the 1.5 s waited (less the time to start the pass-thru, which the
            // wait included), at most all the time until Done returned.
            let upper = Int((endedAt - started) / .milliseconds(1)) * 16
            #expect(frames >= 1400 * 16 && frames <= upper, "\(frames) frames")
            #expect(recording.result.framesCaptured == UInt64(frames))
            #expect(recording.bytes == Array(CaptureFixture.pattern(frames * 2)))
        }
    }

    @Test func endAudioPassThruEndsTheCallersOwn() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(1_000_000), pace: "realtime") { capture in
            await expectDBusError(EarshotErrorName.rejected.name) { try await capture.capture.endActive() }
            let recording = try await capture.record(Self.long) { passThru in
                let other = try await capture.bus.connect()
                defer { other.close() }
                // Not the owner: neither EndAudioPassThru nor End.
                await expectDBusError(EarshotErrorName.rejected.name) { try await capture.capture(on: other).endActive() }
                await expectDBusError(EarshotErrorName.disallowed.name) {
                    try await capture.capture(on: other).passThru(at: passThru.path).end()
                }
                try await capture.capture.endActive()
            }
            #expect(recording.result.resultCode == .success && recording.result.reason == .end)
        }
    }

    @Test func aSecondRequestIsRejectedWithTheTimeLeft() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(1_000_000), pace: "realtime") { capture in
            let first = try await capture.start(Self.long)
            let other = try await capture.bus.connect()
            defer { other.close() }
            let error = await expectDBusError(EarshotErrorName.rejected.name) { _ = try await capture.start(Self.long, on: other) }
            #expect(error?.message.contains("ms remaining") == true, "\(String(describing: error))")
            let remaining = error?.message.split(separator: " ").compactMap { Int($0) }.last ?? -1
            #expect(remaining > 15_000 && remaining <= 20_000, "\(String(describing: error))")
            #expect(try await capture.capture.active() == first.path)
            try await first.cancel()
        }
    }

    @Test func theOwnerLeavingAbortsAndFreesTheDevice() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(1_000_000), pace: "realtime") { capture in
            let watcher = try await CaptureFixture.subscribe(capture.client)
            let owner = try await capture.bus.connect()
            let passThru = try await capture.start(Self.long, on: owner)
            try await Task.sleep(for: .milliseconds(200))
            owner.close()
            let recording = try await CaptureFixture.collect(watcher, path: passThru.path, timeout: .seconds(5))
            #expect(recording.result.resultCode == .aborted && !recording.result.success && recording.result.reason == .ownerVanished)
            #expect(recording.chunks.isEmpty)  // the chunks went to the owner only
            // The device is free again at once.
            let next = try await capture.record(CaptureFixture.request(maxMs: 200))
            #expect(next.result.resultCode == .success)
        }
    }

    @Test func aPassThruThatOutlivesItsOwnerRunsToItsEnd() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(100_000), pace: "realtime") { capture in
            let watcher = try await CaptureFixture.subscribe(capture.client)
            let owner = try await capture.bus.connect()
            let passThru = try await capture.start(CaptureFixture.request(maxMs: 600) { $0.outliveOwner = true }, on: owner)
            owner.close()
            let recording = try await CaptureFixture.collect(watcher, path: passThru.path, timeout: .seconds(5))
            #expect(recording.result.resultCode == .success && recording.result.reason == .timeout)
            #expect(recording.result.framesCaptured == 9600)
        }
    }

    @Test func thePromptIsSpokenByTheAlertServiceBeforeRecording() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(100_000)) { capture in
            let alerts = try await ServiceProcess("earshot-alerts", arguments: ["--output-device", "null"], bus: capture.bus,
                                                  busName: AlertsContract.busName)
            defer { alerts.stop() }
            let states = try await capture.client.subscribe(MatchRule(sender: CaptureFixture.busName,
                                                                      interface: "org.freedesktop.DBus.Properties",
                                                                      member: "PropertiesChanged"))
            let recording = try await capture.record(CaptureFixture.request(maxMs: 300) { $0.initialPrompt = [.text("Speak after the tone")] })
            #expect(recording.result.resultCode == .success && recording.result.success && recording.result.reason == .timeout)
            var seen: [String] = []
            while let signal = await states.next(timeout: .milliseconds(300)) {
                if let state = signal.body.dropFirst().first?.stringKeyedValue?[PassThruMembers.state]?.stringValue { seen.append(state) }
            }
            #expect(seen.first == "recording" && seen.last == "finished", "State went \(seen)")
            #expect(alerts.logText.contains("speech only, 1 audio chunk(s)"))
            await alerts.shutdown()
        }
    }

    @Test func chunksReachOnlyTheOwner() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(100_000)) { capture in
            // A client listening to every signal on the bus (without eavesdropping).
            let snoop = try await capture.bus.connect()
            defer { snoop.close() }
            let everything = try await snoop.subscribe(MatchRule())
            let recording = try await capture.record(CaptureFixture.request(maxMs: 500) { $0.chunkMs = 10 })
            #expect(recording.chunks.count == 50)
            var seen: [String] = []
            while let signal = await everything.next(timeout: .milliseconds(500)) { seen.append(signal.member ?? "") }
            #expect(seen.contains(PassThruMembers.finished.name))
            #expect(!seen.contains(PassThruMembers.audioPassThru.name))
        }
    }

    @Test func aPromptWithoutTheAlertServiceEndsWithWarnings() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(100_000)) { capture in
            let recording = try await capture.record(CaptureFixture.request(maxMs: 300) { $0.initialPrompt = [.text("Speak after the tone")] })
            #expect(recording.result.resultCode == .warnings && recording.result.success && recording.result.reason == .timeout)
            #expect(recording.result.framesCaptured == 4800)
        }
    }

    @Test func recordingStartsWhenThePromptHasBeenSpoken() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(100_000), pace: "realtime") { capture in
            // Until the alert service exists, a stand-in serves Alerts1.Speak on the bus:
            // it completes each prompt after 400 ms.
            let alerts = try await capture.bus.connect()
            defer { alerts.close() }
            let spoken = Locked<[[DBusValue]]>([])
            let alertsPath = ObjectPath(declared: AlertsContract.managerPath)
            try alerts.export(alertsPath, interfaces: [DBusInterface(AlertsContract.Manager.interface.name, methods: [
                DBusMethod(AlertsContract.Manager.speak.name, in: [DBusArgument("chunks", "a(ss)"), DBusArgument("options", "a{sv}")],
                           out: [DBusArgument("alert", "o")]) { call in
                    spoken.withLock { $0.append(call.arguments) }
                    let path: ObjectPath = "/org/earshot/Alerts1/Alert/1"
                    Task {
                        try await Task.sleep(for: .milliseconds(400))
                        try call.connection.emitSignal(path: path, interface: AlertsContract.Alert.interface.name,
                                                       member: AlertsContract.Alert.completed.name,
                                                       [.boolean(true), .string("SUCCESS"), .vardict([:])])
                    }
                    return [.objectPath(path)]
                },
            ])])
            try await alerts.requestName(AlertsContract.busName)
            let prompt = DBusValue.array(.structure([.string, .string]), [.structure([.string("TEXT"), .string("Speak now")])])
            let recording = try await capture.record(CaptureFixture.request(maxMs: 300) { $0.initialPrompt = [.text("Speak now")] }) { passThru in
                #expect(try await passThru.state() == .prompting)
                // It stays prompting until the stand-in completes the prompt (400 ms).
                let deadline = ContinuousClock.now + .seconds(20)
                var state = try await passThru.state()
                while state == .prompting, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                    state = try await passThru.state()
                }
                #expect(state == .recording || state == .finished)
            }
            #expect(recording.result.resultCode == .success)
            #expect(spoken.withLock { $0.first?.first } == prompt)
        }
    }
}
