import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

private typealias Capture = CaptureContract.Manager
private typealias CaptureKeys = CaptureContract.Manager.Keys
private typealias PassThru = CaptureContract.PassThru

/// The capture service with the session service on the same bus: it records from the
/// session's input with its channel count, and its MuteAudio claim interrupts other audio.
@Suite struct CaptureFollowsSessionTests {
    static let capture = CaptureContract.busName
    static let passThru = PassThru.interface.name

    func perform(_ connection: DBusConnection, maxMs: UInt32, mute: Bool) async throws -> ObjectPath {
        let reply = try await connection.call(destination: Self.capture, path: "/org/earshot/Capture1", interface: Capture.interface.name,
                                              member: Capture.performAudioPassThru.name, [.vardict([
                                                  CaptureKeys.samplingRate.name: .uint32(16000), CaptureKeys.bitsPerSample.name: .uint32(16),
                                                  CaptureKeys.audioType.name: .string("PCM"), CaptureKeys.maxDuration.name: .uint32(maxMs),
                                                  CaptureKeys.muteAudio.name: .boolean(mute),
                                              ])])
        return try #require(reply.first?.objectPathValue)
    }

    @Test func recordsFromTheSessionsInputAndMutesOthers() async throws {
        try await SessionFixture.with { session in
            try await session.setDesiredState(DesiredSessionState(category: "playAndRecord", ioBufferDuration: 0.01,
                                                                  preferredInput: "stereo_mic", polarPattern: "stereo"))
            let capture = try await ServiceProcess("earshot-capture", arguments: ["--device", "null", "--pace", "realtime"],
                                                   bus: session.bus, busName: Self.capture,
                                                   environment: SessionFixture.devices(of: session.bus, extra: []).environment)
            defer { capture.stop() }
            let music = try await session.bus.connect()
            defer { music.close() }
            let interruptions = try await music.subscribe(MatchRule(sender: SessionFixture.busName, interface: SessionFixture.interface,
                                                                    member: Session.interruption.name))
            _ = try await session.activate("playback", on: music)

            let signals = try await session.client.subscribe(MatchRule(sender: Self.capture, interface: Self.passThru))
            let path = try await perform(session.client, maxMs: 1500, mute: true)
            let channels = try await session.client.call(destination: Self.capture, path: path, interface: "org.freedesktop.DBus.Properties",
                                                         member: "Get", [.string(Self.passThru), .string(PassThru.channels.name)]).first?.variantValue
            #expect(channels == .uint32(2))
            #expect(await interruptions.next(timeout: .seconds(5))?.body.first?.stringValue == "began")

            var audio: [UInt8] = []
            var finished = false
            while let signal = await signals.next(timeout: .seconds(10)) {
                guard signal.path == path else { continue }
                if signal.member == PassThru.audioPassThru.name { audio += signal.body[0].bytesValue ?? [] }
                if signal.member == PassThru.finished.name {
                    finished = true
                    break
                }
            }
            #expect(finished)
            // 1.5 s of 16 kHz 16-bit stereo, byte for byte what stereo_mic plays (not --device null's zeros).
            let expectedBytes = 16000 * 2 * 2 * 3 / 2
            #expect(audio.count == expectedBytes)
            #expect(audio == Array(SessionFixture.microphonePattern.prefix(audio.count)))
            let ended = try #require(await interruptions.next(timeout: .seconds(5)))
            #expect(ended.body.first?.stringValue == "ended")
            #expect(ended.body[1].stringKeyedValue?[Session.InterruptionKeys.shouldResume]?.boolValue == true)
            #expect(capture.logText.contains("on stereo_mic (the session's input)"))

            // Without MuteAudio the claim mixes: nobody is interrupted.
            let quiet = try await perform(session.client, maxMs: 300, mute: false)
            #expect(await interruptions.next(timeout: .milliseconds(600)) == nil)
            _ = quiet
            await capture.shutdown()
        }
    }

    /// Another client's non-mixable activation interrupts a MuteAudio pass-thru: it ends
    /// ABORTED, `interrupted`, and its chunks stop.
    @Test func aPassThruInterruptedByAnotherClientEndsAborted() async throws {
        try await SessionFixture.with { session in
            let capture = try await ServiceProcess("earshot-capture", arguments: ["--device", "null", "--pace", "realtime"],
                                                   bus: session.bus, busName: Self.capture,
                                                   environment: SessionFixture.devices(of: session.bus, extra: []).environment)
            defer { capture.stop() }
            let signals = try await session.client.subscribe(MatchRule(sender: Self.capture, interface: Self.passThru))
            let started = ContinuousClock.now
            let path = try await perform(session.client, maxMs: 10_000, mute: true)
            var chunks = 0
            while chunks < 3, let signal = await signals.next(timeout: .seconds(5)) {
                if signal.path == path, signal.member == PassThru.audioPassThru.name { chunks += 1 }
            }
            #expect(chunks == 3, "the pass-thru did not record")
            let phone = try await session.bus.connect()
            defer { phone.close() }
            _ = try await session.activate("playback", on: phone)
            var finished: DBusMessage?
            while finished == nil, let signal = await signals.next(timeout: .seconds(5)) {
                if signal.path == path, signal.member == PassThru.finished.name { finished = signal }
            }
            let end = try #require(finished, "the pass-thru was not interrupted")
            #expect(end.body[0].stringValue == "ABORTED")
            #expect(end.body[1].boolValue == false)
            #expect(end.body[2].stringKeyedValue?[PassThru.FinishedKeys.reason]?.stringValue == "interrupted")
            #expect(ContinuousClock.now - started < .seconds(9), "it ran to its \(CaptureContract.Manager.Keys.maxDuration.name)")
            // Nothing more of it comes.
            let late = await signals.next(timeout: .milliseconds(400))
            #expect(late?.path != path, "\(String(describing: late?.member)) after Finished")
            await capture.shutdown()
        }
    }

    /// A pass-thru holds the session's input open, so probing it says busy (-EBUSY): a
    /// rescan meanwhile must not take it for gone.
    @Test func aBusyInputIsNotReportedGone() async throws {
        try await SessionFixture.with { session in
            let routes = try await session.subscribe(Session.routeChanged)
            try session.rewriteDevices(extra: [], exclusive: ["busy_mic"])
            #expect(await routes.next(timeout: .seconds(10))?.body.first == .string("NewDeviceAvailable"))
            try await session.setDesiredState(DesiredSessionState(category: "record", preferredInput: "busy_mic"))
            #expect(await routes.next(timeout: .seconds(5))?.body.first == .string("Override"))
            let capture = try await ServiceProcess("earshot-capture", arguments: ["--device", "null", "--pace", "realtime"],
                                                   bus: session.bus, busName: Self.capture, environment: SessionFixture.environment(of: session.bus))
            defer { capture.stop() }
            let signals = try await session.client.subscribe(MatchRule(sender: Self.capture, interface: Self.passThru))
            let path = try await perform(session.client, maxMs: 4000, mute: false)
            var chunk: DBusMessage?
            while let signal = await signals.next(timeout: .seconds(5)), chunk == nil {
                if signal.path == path, signal.member == PassThru.audioPassThru.name { chunk = signal }
            }
            #expect(chunk != nil)
            #expect(capture.logText.contains("on busy_mic (the session's input)"))
            // It is busy indeed: another user cannot open it now.
            let arecord = try? await ToolRun.run(["/usr/bin/arecord", "-D", "busy_mic", "-f", "S16_LE", "-r", "16000", "-d", "1", "/dev/null"],
                                                 environment: SessionFixture.environment(of: session.bus))
            #expect(arecord == nil)

            // A microphone plugged in while the pass-thru records: a rescan.
            try session.rewriteDevices(extra: [("hotplug_mic", 1)], exclusive: ["busy_mic"])
            let change = try #require(await routes.next(timeout: .seconds(10)))
            #expect(change.body.first == .string("NewDeviceAvailable"))
            #expect(await routes.next(timeout: .milliseconds(500)) == nil)  // and no OldDeviceUnavailable
            let names = try await session.inputs().map(\.name)
            #expect(names.contains("busy_mic") && names.contains("hotplug_mic"), "\(names)")
            #expect(try await session.state().input == "busy_mic")
            await capture.shutdown()
        }
    }

    /// `Device` and `Capabilities` describe the input the next pass-thru will use, as the
    /// session's route changes.
    @Test func capabilitiesFollowTheSessionsInput() async throws {
        try await SessionFixture.with { session in
            let routes = try await session.subscribe(Session.routeChanged)
            try session.rewriteDevices(extra: [], exclusive: ["narrow_mic"], rates: ["narrow_mic": 16000])
            #expect(await routes.next(timeout: .seconds(10))?.body.first == .string("NewDeviceAvailable"))
            let capture = try await ServiceProcess("earshot-capture", arguments: ["--device", "null"],
                                                   bus: session.bus, busName: Self.capture, environment: SessionFixture.environment(of: session.bus))
            defer { capture.stop() }
            let changes = try await session.client.subscribe(MatchRule(sender: Self.capture, interface: "org.freedesktop.DBus.Properties",
                                                                       member: "PropertiesChanged", path: "/org/earshot/Capture1"))
            func described(_ device: String) async throws -> [[String: DBusValue]] {
                let deadline = ContinuousClock.now + .seconds(10)
                while ContinuousClock.now < deadline, let change = await changes.next(timeout: deadline - ContinuousClock.now) {
                    let values = change.body[1].stringKeyedValue ?? [:]
                    if values[Capture.device] == .string(device) {
                        return values[Capture.capabilities]?.arrayValue?.compactMap(\.stringKeyedValue) ?? []
                    }
                }
                throw HarnessError("Device never became \(device)")
            }
            func rates(_ capabilities: [[String: DBusValue]]) -> Set<UInt32> {
                Set(capabilities.compactMap { $0[Capture.CapabilityKeys.samplingRate]?.uint32Value })
            }

            try await session.setDesiredState(DesiredSessionState(category: "record", preferredInput: "narrow_mic"))
            let narrow = try await described("narrow_mic")
            #expect(rates(narrow) == [16000])
            #expect(Set(narrow.compactMap { $0[Capture.CapabilityKeys.bitsPerSample]?.uint32Value }) == [8, 16])
            #expect(try await session.client.call(destination: Self.capture, path: "/org/earshot/Capture1", interface: "org.freedesktop.DBus.Properties",
                                                  member: "Get", [.string(Capture.interface.name), .string(Capture.device.name)]).first?.variantValue
                == .string("narrow_mic"))

            try await session.setDesiredState(DesiredSessionState(category: "record", preferredInput: "stereo_mic"))
            #expect(rates(try await described("stereo_mic")) == [8000, 16000, 22050, 44100, 48000])
            await capture.shutdown()
        }
    }

    @Test func withoutTheSessionServiceItUsesItsOwnDevice() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let capture = try await ServiceProcess("earshot-capture", arguments: ["--device", "null", "--channels", "1"], bus: bus,
                                               busName: Self.capture)
        defer { capture.stop() }
        let client = try await bus.connect()
        defer { client.close() }
        let path = try await perform(client, maxMs: 200, mute: true)
        let channels = try await client.call(destination: Self.capture, path: path, interface: "org.freedesktop.DBus.Properties",
                                             member: "Get", [.string(Self.passThru), .string(PassThru.channels.name)]).first?.variantValue
        #expect(channels == .uint32(1))
        #expect(capture.logText.contains("on null:"))
        client.close()
        await capture.shutdown()
        await bus.shutdown()
    }

    /// A session service that leaves the bus (killed) is not started again by capture's
    /// watch of it: on a head unit, systemd restarts it (a start through the bus meanwhile
    /// would take the place of that restart). Capture describes its own `--device` until the
    /// session is back.
    @Test func aSessionThatLeavesIsNotStartedAgainByCapture() async throws {
        // (An activation file's Exec line is split at spaces: a path without any.)
        let services = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-activation-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: services) }
        let session = ServiceProcess.productsDirectory.appendingPathComponent("earshot-session").path
        try """
            [D-BUS Service]
            Name=\(SessionFixture.busName)
            Exec=\(session) --mixer none --state-file \(services.path)/session.json

            """.write(to: services.appendingPathComponent("\(SessionFixture.busName).service"), atomically: true, encoding: .utf8)
        let bus = try await PrivateBus.start(serviceDirectory: services)
        defer { bus.stop() }
        let client = try await bus.connect()
        defer { client.close() }
        // Capture reads the session's input at start, which starts the session.
        let capture = try await ServiceProcess("earshot-capture", arguments: ["--device", "null", "--channels", "1"], bus: bus,
                                               busName: Self.capture)
        defer { capture.stop() }
        var owner: String?
        let deadline = ContinuousClock.now + .seconds(10)
        while owner == nil, ContinuousClock.now < deadline {
            owner = try await client.nameOwner(SessionFixture.busName)
            if owner == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let first = try #require(owner, "capture did not start the session at its start: \(bus.logText)\n\(capture.logText)")
        let pid = try await client.processID(of: first)
        #expect(kill(pid_t(pid), SIGKILL) == 0)
        // Capture has seen it leave (its owner watch) well within this, and asked nothing.
        try await Task.sleep(for: .seconds(3))
        #expect(try await client.nameOwner(SessionFixture.busName) == nil, "capture started the session again when it left")
        let device = try await client.call(destination: Self.capture, path: "/org/earshot/Capture1", interface: "org.freedesktop.DBus.Properties",
                                           member: "Get", [.string(Capture.interface.name), .string(Capture.device.name)]).first?.variantValue
        #expect(device == .string("null"))
        client.close()
        await capture.shutdown()
        await bus.shutdown()
    }
}
