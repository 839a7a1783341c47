import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

private typealias StreamKeys = SessionContract.Manager.StreamKeys

extension MixerPolicyTests {
/// Whose audio an activation's is, heard on a real PipeWire with pipewire-pulse: a 15 kHz
/// tone is the radio (other audio, ducked), a 5 kHz tone the requester's own (left at its
/// level), both `Music`, which the policy would otherwise duck. (Within `MixerPolicyTests`:
/// one PipeWire test at a time.)
@Suite struct OwnAudio {
    static let radioHertz = 15000.0
    static let ownHertz = 5000.0
    static let duckDB = 20 * log10(0.3)

    struct Rig {
        let pipewire: PipeWireTestSystem
        let session: SessionFixture

        /// The two tones' levels at the speakers.
        func levels() async throws -> (radio: Double, own: Double) {
            let heard = try await pipewire.listen(seconds: 0.6)
            return (PipeWireTestSystem.toneLevel(heard, hertz: OwnAudio.radioHertz),
                    PipeWireTestSystem.toneLevel(heard, hertz: OwnAudio.ownHertz))
        }

        func streams() async throws -> [[String: DBusValue]] {
            try await session.proxy.read(.streams)
        }

        /// Waits until the session shows `count` Music streams, `ducked` of them ducked.
        func waitForStreams(_ count: Int, ducked: Int) async throws {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                let music = try await streams().filter { $0[StreamKeys.role]?.stringValue == "Music" }
                if music.count == count, music.filter({ $0[StreamKeys.ducked]?.boolValue == true }).count == ducked { return }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw HarnessError("wanted \(count) Music stream(s), \(ducked) ducked: \(try await streams())\n"
                               + "--- earshot-session:\n\(session.service.logText.suffix(3000))")
        }

        /// Expects the radio ducked and the own tone at its level, from levels heard at full.
        func expectOnlyTheRadioDucked(from full: (radio: Double, own: Double)) async throws {
            let now = try await levels()
            #expect(abs((now.radio - full.radio) - OwnAudio.duckDB) <= 1.5, "the radio went \(now.radio - full.radio) dB")
            #expect(abs(now.own - full.own) <= 1, "the own audio went \(now.own - full.own) dB")
        }
    }

    static func with(_ body: (Rig) async throws -> Void) async throws {
        let pipewire = try await PipeWireTestSystem.start(pulse: true)
        do {
            _ = try pipewire.play(try pipewire.tone(hertz: radioHertz, amplitude: 0.5, seconds: 120), role: "Music")
            try await SessionFixture.with(arguments: ["--mixer", "pipewire"], environment: pipewire.environment) { session in
                let rig = Rig(pipewire: pipewire, session: session)
                try await rig.waitForStreams(1, ducked: 0)
                try await body(rig)
            }
        } catch {
            let logs = pipewire.log("pipewire.log") + pipewire.log("pipewire-pulse.log")
            await pipewire.stop()
            throw HarnessError("\(error)\n--- PipeWire:\n\(logs.suffix(1500))")
        }
        await pipewire.stop()
    }

    /// A stream key in the environment marks the streams of the requester's children, be
    /// they native (pw-play, a shell's child) or PulseAudio programs (paplay).
    @Test(arguments: ["pw-play", "paplay"])
    func childrenPlayingWithTheActivationsStreamKeyAreItsOwn(player: String) async throws {
        try await Self.with { rig in
            let key = "navigation-\(UUID().uuidString.prefix(8))"
            let tone = try rig.pipewire.tone(hertz: Self.ownHertz, amplitude: 0.5, seconds: 60)
            let command = player == "pw-play" ? "exec /usr/bin/pw-play --media-role Music \(tone.path)" : "exec /usr/bin/paplay \(tone.path)"
            let environment = rig.pipewire.playerEnvironment(player == "pw-play"
                ? ["PIPEWIRE_PROPS": "{ earshot.stream = \(key) }"]
                : ["PULSE_PROP": "earshot.stream=\(key) media.role=Music"])
            // A grandchild of the test: the shell's own child.
            let prompt = try ChildProcess(["/bin/sh", "-c", command], environment: environment,
                                          logPath: rig.pipewire.directory.appendingPathComponent("\(player).log").path)
            defer { prompt.signal(SIGKILL) }
            try await rig.waitForStreams(2, ducked: 0)
            let full = try await rig.levels()
            #expect(full.own > -10 && full.radio > -10, "\(full)")
            let navigation = try await rig.session.bus.connect()
            defer { navigation.close() }
            let activation = try await rig.session.activate("playback", options: ["duckOthers"], audioStream: key, on: navigation)
            try await rig.waitForStreams(2, ducked: 1)
            try await rig.expectOnlyTheRadioDucked(from: full)
            try await activation.deactivate()
            try await rig.waitForStreams(2, ducked: 0)
        }
    }

    /// A program that asks for the duck and plays through the PulseAudio API itself: its
    /// stream's client is pipewire-pulse's, and the program's own process id is on the
    /// stream.
    @Test func aProgramsOwnAudioThroughPipeWirePulseIsItsOwn() async throws {
        try await Self.with { rig in
            let before = try await rig.levels()
            let script = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Fixtures/own-audio.py")
            let call: [String: Any] = [
                "bus": SessionContract.busName, "path": SessionFixture.path.rawValue, "interface": SessionFixture.interface,
                "method": Session.activate.name,
                "request": [SessionKeys.category.name: "playback", SessionKeys.options.name: ["duckOthers"]],
                "hertz": Self.ownHertz, "seconds": 20,
            ]
            let json = String(decoding: try JSONSerialization.data(withJSONObject: call), as: UTF8.self)
            let printed = rig.pipewire.directory.appendingPathComponent("own-audio.out")
            let out = open(printed.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            defer { close(out) }
            let program = try ChildProcess(["/usr/bin/python3", script.path, json],
                                           environment: rig.pipewire.playerEnvironment([
                                               "DBUS_SESSION_BUS_ADDRESS": rig.session.bus.address, "PULSE_PROP": "media.role=Music"]),
                                           stdout: out, logPath: rig.pipewire.directory.appendingPathComponent("own-audio.log").path)
            defer { program.signal(SIGKILL) }
            try await rig.waitForStreams(2, ducked: 1)
            #expect((try? String(contentsOf: printed, encoding: .utf8))?.hasPrefix("activated /") == true)
            // The own tone's level at full is what it plays at with nothing ducking it: a
            // 0.5 sine, as the radio before the duck.
            try await rig.expectOnlyTheRadioDucked(from: (radio: before.radio, own: before.radio))
        }
    }
}
}
