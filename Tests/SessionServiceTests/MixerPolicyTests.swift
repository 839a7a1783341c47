import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

private typealias StreamKeys = SessionContract.Manager.StreamKeys
private typealias Capture = CaptureContract.Manager
private typealias CaptureKeys = CaptureContract.Manager.Keys
private typealias PassThru = CaptureContract.PassThru
private typealias Alerts = AlertsContract.Manager
private typealias AlertKeys = AlertsContract.Manager.Keys

/// The focus policy heard on a real PipeWire: a 15 kHz tone played as a Music stream is the
/// radio, measured at the speakers' monitor (espeak-ng's speech has nothing at 15 kHz).
@Suite(.serialized) struct MixerPolicyTests {
    static let radioHertz = 15000.0
    static let duckDB = 20 * log10(0.3)

    struct Rig {
        let pipewire: PipeWireTestSystem
        let session: SessionFixture
        let radio: ChildProcess

        func radioLevel(seconds: Double = 0.6) async throws -> Double {
            PipeWireTestSystem.toneLevel(try await pipewire.listen(seconds: seconds), hertz: MixerPolicyTests.radioHertz)
        }

        func streams() async throws -> [[String: DBusValue]] {
            try await session.proxy.read(.streams)
        }

        /// Waits until the session sees the radio as a stream.
        func waitForRadio(_ check: ([String: DBusValue]) -> Bool = { _ in true },
                          sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: DBusValue] {
            let began = Date.now
            let deadline = ContinuousClock.now + .seconds(10)
            var polls = 0
            var seen: [[String: DBusValue]] = []
            while ContinuousClock.now < deadline {
                seen = try await streams()
                polls += 1
                if let radio = seen.first(where: { $0[StreamKeys.role]?.stringValue == "Music" }), check(radio) { return radio }
                try await Task.sleep(for: .milliseconds(50))
            }
            let nodes = (try? await pipewire.tool(["pw-cli", "ls", "Node"])) ?? "?"
            throw HarnessError("""
                the session never showed the radio as wanted (waited at \(sourceLocation.fileName):\(sourceLocation.line) from \(Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(began)), \
                \(polls) polls; the last: \(seen)); now: \(try await streams())
                --- pw-play: \(radio.isRunning ? "running" : "exited") \(pipewire.log("pw-play.log"))
                --- nodes:\n\(nodes.suffix(3000))
                --- earshot-session:\n\(session.service.logText.suffix(4000))
                """)
        }
    }

    static func with(_ body: (Rig) async throws -> Void) async throws {
        let pipewire = try await PipeWireTestSystem.start()
        do {
            let radio = try pipewire.play(try pipewire.tone(hertz: radioHertz, amplitude: 0.5, seconds: 120), role: "Music")
            try await SessionFixture.with(arguments: ["--mixer", "pipewire", "--log-level", "debug"], environment: pipewire.environment) { session in
                let rig = Rig(pipewire: pipewire, session: session, radio: radio)
                _ = try await rig.waitForRadio()
                try await body(rig)
            }
        } catch {
            let logs = pipewire.log("pipewire.log") + pipewire.log("wireplumber.log")
            await pipewire.stop()
            throw HarnessError("\(error)\n--- PipeWire:\n\(logs.suffix(1500))")
        }
        await pipewire.stop()
    }

    @Test func duckOthersLowersTheRadioToDuckLevelAndRestoresIt() async throws {
        try await Self.with { rig in
            #expect(try await rig.session.proxy.read(.mixer) == "pipewire")
            #expect(try rig.session.service.maps("libpipewire-0.3"), "attached without libpipewire mapped")
            // Its context loads the protocol and the metadata, not client.conf's modules.
            #expect(try rig.session.service.maps("libpipewire-module-protocol-native"))
            for module in ["client-node", "client-device", "adapter", "session-manager"] {
                #expect(try !rig.session.service.maps("libpipewire-module-" + module), "the mixer's context loaded \(module)")
            }
            let full = try await rig.radioLevel()
            #expect(full > -8)  // a 0.5 sine: -6 dB
            let music = try await rig.session.bus.connect()
            defer { music.close() }
            let activation = try await rig.session.activate("playback", options: ["duckOthers"], on: music)
            _ = try await rig.waitForRadio { $0[StreamKeys.ducked]?.boolValue == true }
            let ducked = try await rig.radioLevel()
            #expect(abs((ducked - full) - Self.duckDB) <= 1, "ducked by \(ducked - full) dB, wanted \(Self.duckDB)")

            try await activation.deactivate()
            _ = try await rig.waitForRadio { $0[StreamKeys.ducked]?.boolValue == false }
            let restored = try await rig.radioLevel()
            #expect(abs(restored - full) <= 1, "restored to \(restored) dB from \(full)")
        }
    }

    @Test func aNonMixableActivationMutesTheRadioAndANewDuckLevelApplies() async throws {
        try await Self.with { rig in
            let full = try await rig.radioLevel()
            try await rig.session.proxy.write(.duckLevel, 0.5)
            let music = try await rig.session.bus.connect()
            defer { music.close() }
            let ducking = try await rig.session.activate("playback", options: ["duck"], on: music)
            _ = try await rig.waitForRadio { $0[StreamKeys.ducked]?.boolValue == true }
            let half = try await rig.radioLevel()
            #expect(abs((half - full) - 20 * log10(0.5)) <= 1)
            let solo = try await rig.session.activate("playback", on: music)
            _ = try await rig.waitForRadio { $0[StreamKeys.muted]?.boolValue == true }
            #expect(try await rig.radioLevel() < -60)
            try await solo.deactivate()
            try await ducking.deactivate()
            _ = try await rig.waitForRadio { $0[StreamKeys.muted]?.boolValue == false && $0[StreamKeys.ducked]?.boolValue == false }
            #expect(abs(try await rig.radioLevel() - full) <= 1)
            // A stream's own volume is the one shown.
            #expect(try await rig.waitForRadio()[StreamKeys.volume] == .double(1))
        }
    }

    /// What WirePlumber keeps for the radio's role is its own level, never a lowered one: it
    /// gives that to the next stream of the role. It writes its file a moment after a change.
    static func expectStoredLevelIsOwn(_ rig: Rig, _ when: String) async throws {
        try await Task.sleep(for: .milliseconds(1500))
        let stored = rig.pipewire.storedPlaybackLevels(role: "Music")
        #expect(!stored.isEmpty, "\(when): WirePlumber stored nothing for Music")
        for key in ["volume", "channelVolumes"] {
            let levels = (stored[key] ?? "").split(separator: ";").compactMap { Double($0) }
            #expect(!levels.isEmpty && levels.allSatisfy { abs($0 - 1) < 1e-3 }, "\(when): WirePlumber stored Music \(key) \(stored[key] ?? "none")")
        }
    }

    /// A second radio started now plays at its own level.
    static func expectANewRadioPlaysAtItsOwnLevel(_ rig: Rig, full: Double) async throws {
        rig.radio.signal(SIGTERM)
        _ = await rig.radio.waitForExit(timeout: .seconds(5))
        let radio = try rig.pipewire.play(try rig.pipewire.tone(hertz: Self.radioHertz, amplitude: 0.5, seconds: 60), role: "Music")
        defer { radio.signal(SIGTERM) }
        try await Task.sleep(for: .milliseconds(700))
        let level = try await rig.radioLevel()
        #expect(abs(level - full) <= 1, "a new radio at \(level) dB, its own level \(full)")
    }

    @Test func aKilledSessionLeavesNothingBehindAndItsNextStartRestoresTheRadio() async throws {
        try await Self.with { rig in
            let full = try await rig.radioLevel()
            let music = try await rig.session.bus.connect()
            defer { music.close() }
            _ = try await rig.session.activate("playback", options: ["duckOthers"], on: music)
            _ = try await rig.waitForRadio { $0[StreamKeys.ducked]?.boolValue == true }
            #expect(try await rig.radioLevel() < full - 6)
            rig.session.service.signal(SIGKILL)
            _ = await rig.session.service.waitForExit(timeout: .seconds(5))
            #expect(try await rig.radioLevel() < full - 6)  // still lowered: nobody restored it
            // Nothing was kept on the side to restore it by: the stream shows it.
            let stateDirectory = SessionFixture.stateFileURL(of: rig.session.bus).deletingLastPathComponent()
            let kept = (try? FileManager.default.contentsOfDirectory(atPath: stateDirectory.path)) ?? []
            #expect(kept.allSatisfy { !$0.contains("ledger") }, "\(kept)")
            try await Self.expectStoredLevelIsOwn(rig, "killed while ducking")
            let again = try await ServiceProcess("earshot-session", arguments: ["--linger-seconds", "2", "--mixer", "pipewire"],
                                                 bus: rig.session.bus, busName: SessionFixture.busName,
                                                 environment: SessionFixture.environment(of: rig.session.bus).merging(rig.pipewire.environment) { $1 })
            defer { again.stop() }
            try await Task.sleep(for: .milliseconds(500))
            #expect(abs(try await rig.radioLevel() - full) <= 1)
            #expect(again.logText.contains("left lowered by an earlier run"))
            try await Self.expectANewRadioPlaysAtItsOwnLevel(rig, full: full)
        }
    }

    @Test func aStoppedSessionLeavesEveryStreamAtItsOwnLevel() async throws {
        try await Self.with { rig in
            let full = try await rig.radioLevel()
            let music = try await rig.session.bus.connect()
            defer { music.close() }
            _ = try await rig.session.activate("playback", options: ["duckOthers"], on: music)
            _ = try await rig.waitForRadio { $0[StreamKeys.ducked]?.boolValue == true }
            #expect(try await rig.radioLevel() < full - 6)
            rig.session.service.signal(SIGTERM)
            #expect(await rig.session.service.waitForExit(timeout: .seconds(10)) == 0)
            #expect(rig.session.service.logText.contains("restored 1 stream(s) on the system mixer"))
            #expect(abs(try await rig.radioLevel() - full) <= 1)
            try await Self.expectStoredLevelIsOwn(rig, "stopped")
            try await Self.expectANewRadioPlaysAtItsOwnLevel(rig, full: full)
        }
    }

    @Test func aUserChangingTheDuckedRadioSetsTheLevelItIsDuckedFrom() async throws {
        try await Self.with { rig in
            let full = try await rig.radioLevel()
            let music = try await rig.session.bus.connect()
            defer { music.close() }
            let activation = try await rig.session.activate("playback", options: ["duckOthers"], on: music)
            let radio = try await rig.waitForRadio { $0[StreamKeys.ducked]?.boolValue == true }
            let id = try #require(radio[StreamKeys.id]?.uint32Value)
            // As pavucontrol would: the stream's own levels, to half.
            _ = try await rig.pipewire.tool(["pw-cli", "set-param", String(id), "Props", "{ channelVolumes: [ 0.5, 0.5 ] }"])
            let half = 20 * log10(0.5)
            let deadline = ContinuousClock.now + .seconds(5)
            var level = try await rig.radioLevel()
            while abs(level - (full + half + Self.duckDB)) > 1, ContinuousClock.now < deadline {
                level = try await rig.radioLevel()
            }
            #expect(abs(level - (full + half + Self.duckDB)) <= 1, "ducked from half: \(level) dB, wanted \(full + half + Self.duckDB)")
            try await activation.deactivate()
            _ = try await rig.waitForRadio { $0[StreamKeys.ducked]?.boolValue == false }
            #expect(abs(try await rig.radioLevel() - (full + half)) <= 1, "restored to its new level")
        }
    }

    /// A stream that starts while the radio is ducked never sounds above the duck, in any
    /// 5 ms of what the speakers play: a 9 kHz tone (45 cycles in 5 ms, so the radio's 15
    /// kHz stays out of each window's measure).
    @Test func aStreamStartedDuringADuckIsDuckedFromItsFirstSample() async throws {
        try await Self.with { rig in
            let music = try await rig.session.bus.connect()
            defer { music.close() }
            _ = try await rig.session.activate("playback", options: ["duckOthers"], on: music)
            _ = try await rig.waitForRadio { $0[StreamKeys.ducked]?.boolValue == true }
            let newcomerHertz = 9000.0
            let tone = try rig.pipewire.tone(hertz: newcomerHertz, amplitude: 0.5, seconds: 3)
            let ducked = 20 * log10(0.5) + Self.duckDB
            for round in 0..<5 {
                async let heard = rig.pipewire.listen(seconds: 1.6)
                try await Task.sleep(for: .milliseconds(500))
                let newcomer = try rig.pipewire.play(tone, role: "Music")
                let windows = PipeWireTestSystem.toneLevels(try await heard, hertz: newcomerHertz)
                newcomer.signal(SIGKILL)
                _ = await newcomer.waitForExit(timeout: .seconds(5))
                let peak = windows.max() ?? -200
                #expect(peak <= ducked + 1, "round \(round): the newcomer peaked at \(peak) dB in 5 ms, \(peak - ducked) dB above the duck")
                // It was heard, at the ducked level, once it played.
                let end = windows.suffix(20).sorted()[10]
                #expect(abs(end - ducked) <= 1.5, "round \(round): the newcomer ended at \(end) dB, ducked is \(ducked)")
            }
        }
    }

    @Test func aPipeWireRestartIsAMediaServicesResetAndThePolicyHolds() async throws {
        try await Self.with { rig in
            let resets = try await rig.session.subscribe(Session.mediaServicesReset)
            let music = try await rig.session.bus.connect()
            defer { music.close() }
            _ = try await rig.session.activate("playback", options: ["duckOthers"], on: music)
            _ = try await rig.waitForRadio { $0[StreamKeys.ducked]?.boolValue == true }
            await rig.pipewire.killDaemons()
            try await rig.pipewire.startDaemons()
            #expect(await resets.next(timeout: .seconds(10)) != nil)
            // The radio comes back on the new daemon, and is ducked on arrival.
            let radio = try rig.pipewire.play(try rig.pipewire.tone(hertz: Self.radioHertz, amplitude: 0.5, seconds: 60), role: "Music")
            _ = radio
            _ = try await rig.waitForRadio { $0[StreamKeys.ducked]?.boolValue == true }
            let level = try await rig.radioLevel()
            #expect(abs(level - (-6.02 + Self.duckDB)) <= 1.5, "the radio at \(level) dB")
            #expect(try await rig.session.proxy.read(.route)[Session.RouteKeys.mixerSink.name] == .string("speakers"))
        }
    }

    @Test func aMuteAudioPassThruSilencesTheRadioWhileItRecords() async throws {
        try await Self.with { rig in
            let full = try await rig.radioLevel()
            let capture = try await ServiceProcess("earshot-capture", arguments: ["--device", "mono_mic", "--pace", "realtime", "--no-follow-session"],
                                                   bus: rig.session.bus, busName: CaptureContract.busName,
                                                   environment: SessionFixture.environment(of: rig.session.bus).merging(rig.pipewire.environment) { $1 })
            defer { capture.stop() }
            let finished = try await rig.session.client.subscribe(MatchRule(sender: CaptureContract.busName, interface: PassThru.interface.name,
                                                                            member: PassThru.finished.name))
            _ = try await rig.session.client.call(destination: CaptureContract.busName, path: "/org/earshot/Capture1",
                                                  interface: Capture.interface.name, member: Capture.performAudioPassThru.name, [.vardict([
                                                      CaptureKeys.samplingRate.name: .uint32(16000), CaptureKeys.bitsPerSample.name: .uint32(16),
                                                      CaptureKeys.audioType.name: .string("PCM"), CaptureKeys.maxDuration.name: .uint32(2500),
                                                  ])])
            try await Task.sleep(for: .milliseconds(300))
            let during = try await rig.radioLevel(seconds: 1)
            #expect(during < -60, "the radio at \(during) dB while recording")
            #expect(await finished.next(timeout: .seconds(10)) != nil)
            _ = try await rig.waitForRadio { $0[StreamKeys.muted]?.boolValue == false }
            #expect(abs(try await rig.radioLevel() - full) <= 1)
        }
    }

    @Test func anEmergencyAlertMutesTheRadioAndIsHeard() async throws {
        try await Self.with { rig in
            let alerts = try await ServiceProcess("earshot-alerts", arguments: ["--output-device", "pipewire"],
                                                  bus: rig.session.bus, busName: AlertsContract.busName,
                                                  environment: rig.pipewire.environment)
            defer { alerts.stop() }
            _ = try await rig.session.client.call(destination: AlertsContract.busName, path: "/org/earshot/Alerts1",
                                                  interface: Alerts.interface.name, member: Alerts.presentAlert.name, [.vardict([
                                                      AlertKeys.text.name: .string("Collision ahead"), AlertKeys.priority.name: .string("EMERGENCY"),
                                                      AlertKeys.audio.name: .array(.structure([.string, .string]), [
                                                          .structure([.string("TEXT"), .string("Brake now. Collision ahead. Brake now. Collision ahead.")]),
                                                      ]),
                                                  ])])
            _ = try await rig.waitForRadio { $0[StreamKeys.muted]?.boolValue == true }
            let heard = try await rig.pipewire.listen(seconds: 1)
            let radio = PipeWireTestSystem.toneLevel(heard, hertz: Self.radioHertz)
            let speech = PipeWireTestSystem.rmsLevel(heard)
            #expect(radio < -60, "the radio at \(radio) dB under the alert")
            #expect(speech > -45, "the alert's speech at \(speech) dBFS")
            // The alert's own stream carries its role and is not touched.
            let own = try await rig.streams().first { $0[StreamKeys.role]?.stringValue == "Emergency" }
            #expect(own?[StreamKeys.muted] == .boolean(false))
            #expect(own?[StreamKeys.ducked] == .boolean(false))
        }
    }

    @Test func aPassThruRecordsFromThePipeWireMicrophone() async throws {
        try await Self.with { rig in
            let capture = try await ServiceProcess("earshot-capture", arguments: ["--device", "pipewire", "--no-follow-session"],
                                                   bus: rig.session.bus, busName: CaptureContract.busName,
                                                   environment: rig.pipewire.environment)
            defer { capture.stop() }
            // Someone speaking: a 1 kHz tone played into the virtual microphone.
            let voice = try await rig.pipewire.speakIntoMicrophone(try rig.pipewire.tone(hertz: 1000, amplitude: 0.5, seconds: 30, channels: 1))
            defer { voice.signal(SIGKILL) }
            let signals = try await rig.session.client.subscribe(MatchRule(sender: CaptureContract.busName, interface: PassThru.interface.name))
            _ = try await rig.session.client.call(destination: CaptureContract.busName, path: "/org/earshot/Capture1",
                                                  interface: Capture.interface.name, member: Capture.performAudioPassThru.name, [.vardict([
                                                      CaptureKeys.samplingRate.name: .uint32(48000), CaptureKeys.bitsPerSample.name: .uint32(16),
                                                      CaptureKeys.audioType.name: .string("PCM"), CaptureKeys.maxDuration.name: .uint32(1000),
                                                      CaptureKeys.muteAudio.name: .boolean(false),
                                                  ])])
            var audio: [UInt8] = []
            while let signal = await signals.next(timeout: .seconds(10)) {
                if signal.member == PassThru.audioPassThru.name { audio += signal.body[0].bytesValue ?? [] }
                if signal.member == PassThru.finished.name {
                    #expect(signal.body.first == .string("SUCCESS"))
                    break
                }
            }
            // A second of 48 kHz mono from the virtual source, through ALSA's pipewire PCM,
            // holding the voice at its level (-6 dB) and nothing else of note.
            #expect(audio.count >= 48000 * 2 * 9 / 10)
            #expect(audio.count <= 48000 * 2 * 11 / 10)
            let samples = stride(from: 0, to: audio.count - 1, by: 2).map { Double(Int16(bitPattern: UInt16(audio[$0]) | UInt16(audio[$0 + 1]) << 8)) / 32768 }
            let voiceLevel = PipeWireTestSystem.toneLevel(samples, hertz: 1000)
            #expect(abs(voiceLevel - 20 * log10(0.5)) <= 1.5, "the voice at \(voiceLevel) dB in what was captured")
            #expect(PipeWireTestSystem.toneLevel(samples, hertz: 3000) < -40)
        }
    }

    /// The `pipewire` PCM (pipewire-alsa's) is an input while the daemon answers.
    @Test func withADaemonThePipeWirePCMIsAnInput() async throws {
        try await Self.with { rig in
            let names = try await rig.session.inputs().map(\.name)
            #expect(names.contains("pipewire"), "\(names)")
        }
    }

    /// `--mixer auto` with no daemon yet (as a system service started before PipeWire): it
    /// waits without polling and attaches when the daemon starts, with no restart.
    @Test func autoAttachesToAPipeWireThatStartsLater() async throws {
        let pipewire = try await PipeWireTestSystem.start(daemons: false)
        do {
            try await SessionFixture.with(arguments: ["--mixer", "auto"], environment: pipewire.environment) { session in
                #expect(try await session.proxy.read(.mixer) == "none")
                #expect(try !session.service.maps("libpipewire-0.3"), "libpipewire mapped with no daemon")
                try await pipewire.startDaemons()
                let deadline = ContinuousClock.now + .seconds(5)
                while try await session.proxy.read(.mixer) != "pipewire", ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(try await session.proxy.read(.mixer) == "pipewire", "\(session.service.logText.suffix(2000))")
                let radio = try pipewire.play(try pipewire.tone(hertz: Self.radioHertz, amplitude: 0.5, seconds: 30), role: "Music")
                defer { radio.stop() }
                let rig = Rig(pipewire: pipewire, session: session, radio: radio)
                _ = try await rig.waitForRadio()
            }
        } catch {
            await pipewire.stop()
            throw error
        }
        await pipewire.stop()
    }

    /// With no daemon to attach to, libpipewire is not mapped: not linked, and the
    /// `pipewire` PCMs are not probed (SessionStateTests has the same with a PCM of its own).
    @Test func withoutADaemonNoPipeWireLibraryIsMapped() async throws {
        try await SessionFixture.with { (session: SessionFixture) async throws in
            #expect(try await session.proxy.read(.mixer) == "none")
            #expect(try !session.service.maps("libpipewire-0.3"), "libpipewire mapped with no daemon")
            #expect(try !session.service.maps("libasound_module_pcm_pipewire"), "ALSA's PipeWire plugin still mapped after the scan")
        }
    }

    @Test func aMalformedPolicyFileStopsTheServiceSayingWhere() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-policy-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("roles.conf")
        try "Music = media\nEmergency = never\n".write(to: file, atomically: true, encoding: .utf8)
        let output = try? await ToolRun.run([ServiceProcess.productsDirectory.appendingPathComponent("earshot-session").path,
                                             "--policy", file.path, "--mixer", "none", "--address", "unix:path=/nonexistent"])
        #expect(output == nil)  // it exits non-zero
        let log = directory.appendingPathComponent("run.log")
        let child = try ChildProcess([ServiceProcess.productsDirectory.appendingPathComponent("earshot-session").path, "--policy", file.path],
                                     environment: [:], logPath: log.path)
        let status = await child.waitForExit(timeout: .seconds(10))
        #expect(status != nil && status != 0)
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(text.contains("line 2: 'never' is not media or exempt"), "\(text)")
    }
}
