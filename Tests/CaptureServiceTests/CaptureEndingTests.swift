import ContractCore
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

@Suite struct CaptureEndingTests {
    /// A long pass-thru, paced in real time so there is time to end it.
    static let long = CaptureFixture.request(maxMs: 20_000, [RequestKeys.chunkMs.name: .uint32(50)])

    @Test(arguments: [
        (PassThru.end, "SUCCESS", true, "end"), (PassThru.done, "SUCCESS", true, "done"),
        (PassThru.cancel, "ABORTED", false, "cancel"), (PassThru.retry, "RETRY", true, "retry"),
    ])
    func userActionsEndWithTheirResult(member: MethodDeclaration, code: String, success: Bool, reason: String) async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(1_000_000), pace: "realtime") { capture in
            var framesWhileRecording: [UInt64] = []
            var framesAtTheEnd: DBusValue?
            let recording = try await capture.record(Self.long) { path in
                try await Task.sleep(for: .milliseconds(300))
                // FramesCaptured is read as it is now: it grows while recording.
                for _ in 0..<2 {
                    framesWhileRecording.append(try #require(try await capture.property(PassThru.framesCaptured, path: path)?.uint64Value))
                    try await Task.sleep(for: .milliseconds(120))
                }
                _ = try await capture.call(member, path: path)
                await expectDBusError(EarshotErrorName.rejected.name) { _ = try await capture.call(member, path: path) }
                #expect(try await capture.property(PassThru.resultCode, path: path) == .string(code))
                #expect(try await capture.property(PassThru.state, path: path) == .string("finished"))
                framesAtTheEnd = try await capture.property(PassThru.framesCaptured, path: path)
            }
            #expect(recording.resultCode == code && recording.success == success && recording.reason == reason)
            #expect(recording.chunks.map(\.sequence) == Array(0..<UInt64(recording.chunks.count)))
            #expect(recording.info[FinishedKeys.framesCaptured] == .uint64(UInt64(recording.bytes.count / 2)))
            #expect(framesAtTheEnd == recording.info[FinishedKeys.framesCaptured])
            #expect(framesWhileRecording.count == 2 && framesWhileRecording[0] > 0 && framesWhileRecording[1] > framesWhileRecording[0],
                    "\(framesWhileRecording)")
        }
    }

    @Test func endingKeepsTheAudioHeardSinceTheLastChunk() async throws {
        // One-second chunks (so one-second ALSA periods): ended 1.5 s in, the pass-thru
        // still delivers the half second the device captured after the first chunk.
        try await CaptureFixture.with(input: CaptureFixture.pattern(1_000_000), pace: "realtime") { capture in
            let request = CaptureFixture.request(maxMs: 20_000, [RequestKeys.chunkMs.name: .uint32(1000)])
            let started = ContinuousClock.now
            var endedAt = started
            let recording = try await capture.record(request) { path in
                try await Task.sleep(for: .milliseconds(1500))
                _ = try await capture.call(PassThru.done, path: path)
                endedAt = ContinuousClock.now
            }
            #expect(recording.resultCode == "SUCCESS" && recording.reason == "done")
            // Whole chunks, then what was heard since the last: two chunks, unless a loaded
            // machine delayed Done past the second second.
            #expect(recording.chunks.count >= 2 && (recording.chunks.last?.data.count ?? 0) > 0)
            #expect(recording.chunks.dropLast().allSatisfy { $0.data.count == 32000 })
            let frames = recording.bytes.count / 2
            // At least the 1.5 s waited (less the time to start the pass-thru, which the
            // wait included), at most all the time until Done returned.
            let upper = Int((endedAt - started) / .milliseconds(1)) * 16
            #expect(frames >= 1400 * 16 && frames <= upper, "\(frames) frames")
            #expect(recording.info[FinishedKeys.framesCaptured] == .uint64(UInt64(frames)))
            #expect(recording.bytes == Array(CaptureFixture.pattern(frames * 2)))
        }
    }

    @Test func endAudioPassThruEndsTheCallersOwn() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(1_000_000), pace: "realtime") { capture in
            await expectDBusError(EarshotErrorName.rejected.name) {
                _ = try await capture.call(CaptureManager.endAudioPassThru, path: CaptureFixture.path, interface: CaptureFixture.manager)
            }
            let recording = try await capture.record(Self.long) { path in
                let other = try await capture.bus.connect()
                defer { other.close() }
                // Not the owner: neither EndAudioPassThru nor End.
                await expectDBusError(EarshotErrorName.rejected.name) {
                    _ = try await capture.call(CaptureManager.endAudioPassThru, path: CaptureFixture.path,
                                               interface: CaptureFixture.manager, on: other)
                }
                await expectDBusError(EarshotErrorName.disallowed.name) { _ = try await capture.call(PassThru.end, path: path, on: other) }
                _ = try await capture.call(CaptureManager.endAudioPassThru, path: CaptureFixture.path, interface: CaptureFixture.manager)
            }
            #expect(recording.resultCode == "SUCCESS" && recording.reason == "end")
        }
    }

    @Test func aSecondRequestIsRejectedWithTheTimeLeft() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(1_000_000), pace: "realtime") { capture in
            let first = try await capture.perform(Self.long)
            let other = try await capture.bus.connect()
            defer { other.close() }
            let error = await expectDBusError(EarshotErrorName.rejected.name) { _ = try await capture.perform(Self.long, on: other) }
            #expect(error?.message.contains("ms remaining") == true, "\(String(describing: error))")
            let remaining = error?.message.split(separator: " ").compactMap { Int($0) }.last ?? -1
            #expect(remaining > 15_000 && remaining <= 20_000, "\(String(describing: error))")
            let active = try await capture.property(CaptureManager.active, path: CaptureFixture.path, interface: CaptureFixture.manager)
            #expect(active == .objectPath(first))
            _ = try await capture.call(PassThru.cancel, path: first)
        }
    }

    @Test func theOwnerLeavingAbortsAndFreesTheDevice() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(1_000_000), pace: "realtime") { capture in
            let watcher = try await CaptureFixture.subscribe(capture.client)
            let owner = try await capture.bus.connect()
            let path = try await capture.perform(Self.long, on: owner)
            try await Task.sleep(for: .milliseconds(200))
            owner.close()
            let recording = try await CaptureFixture.collect(watcher, path: path, timeout: .seconds(5))
            #expect(recording.resultCode == "ABORTED" && !recording.success && recording.reason == "owner-vanished")
            #expect(recording.chunks.isEmpty)  // the chunks went to the owner only
            // The device is free again at once.
            let next = try await capture.record(CaptureFixture.request(maxMs: 200))
            #expect(next.resultCode == "SUCCESS")
        }
    }

    @Test func aPassThruThatOutlivesItsOwnerRunsToItsEnd() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(100_000), pace: "realtime") { capture in
            let watcher = try await CaptureFixture.subscribe(capture.client)
            let owner = try await capture.bus.connect()
            let request = CaptureFixture.request(maxMs: 600, [RequestKeys.outliveOwner.name: .boolean(true)])
            let path = try await capture.perform(request, on: owner)
            owner.close()
            let recording = try await CaptureFixture.collect(watcher, path: path, timeout: .seconds(5))
            #expect(recording.resultCode == "SUCCESS" && recording.reason == "timeout")
            #expect(recording.info[FinishedKeys.framesCaptured] == .uint64(9600))
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
            let recording = try await capture.record(CaptureFixture.request(maxMs: 300, [
                RequestKeys.initialPrompt.name: .array(.structure([.string, .string]),
                                                       [.structure([.string("TEXT"), .string("Speak after the tone")])]),
            ]))
            #expect(recording.resultCode == "SUCCESS" && recording.success && recording.reason == "timeout")
            var seen: [String] = []
            while let signal = await states.next(timeout: .milliseconds(300)) {
                if let state = signal.body.dropFirst().first?.stringKeyedValue?[PassThru.state]?.stringValue { seen.append(state) }
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
            let recording = try await capture.record(CaptureFixture.request(maxMs: 500, [RequestKeys.chunkMs.name: .uint32(10)]))
            #expect(recording.chunks.count == 50)
            var seen: [String] = []
            while let signal = await everything.next(timeout: .milliseconds(500)) { seen.append(signal.member ?? "") }
            #expect(seen.contains(PassThru.finished.name))
            #expect(!seen.contains(PassThru.audioPassThru.name))
        }
    }

    @Test func aPromptWithoutTheAlertServiceEndsWithWarnings() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(100_000)) { capture in
            let recording = try await capture.record(CaptureFixture.request(maxMs: 300, [
                RequestKeys.initialPrompt.name: .array(.structure([.string, .string]),
                                                       [.structure([.string("TEXT"), .string("Speak after the tone")])]),
            ]))
            #expect(recording.resultCode == "WARNINGS" && recording.success && recording.reason == "timeout")
            #expect(recording.info[FinishedKeys.framesCaptured] == .uint64(4800))
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
            let recording = try await capture.record(CaptureFixture.request(maxMs: 300, [RequestKeys.initialPrompt.name: prompt])) { path in
                #expect(try await capture.property(PassThru.state, path: path) == .string("prompting"))
                // It stays prompting until the stand-in completes the prompt (400 ms).
                let deadline = ContinuousClock.now + .seconds(20)
                var state = try await capture.property(PassThru.state, path: path)
                while state == .string("prompting"), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))
                    state = try await capture.property(PassThru.state, path: path)
                }
                #expect(state == .string("recording") || state == .string("finished"))
            }
            #expect(recording.resultCode == "SUCCESS")
            #expect(spoken.withLock { $0.first?.first } == prompt)
        }
    }
}
