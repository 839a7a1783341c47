import ContractCore
import EarshotCabinSound
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// `EchoCancel` on a real PipeWire: the radio plays into the speakers (a null sink), the
/// cabin carries what they play into the microphone (a virtual source) 100 ms later, and a
/// driver speaks into the microphone over it. earshot-capture records the microphone through
/// ALSA's `pipewire` PCM and has the speakers' monitor as its echo reference (a source of
/// its own, as a head unit's configuration gives it).
@Suite(.timeLimit(.minutes(2))) struct CaptureEchoReferenceTests {
    typealias S = CabinSound
    static let rate = S.rate
    static let reference = "earshot-test-echo-reference"

    /// With `EchoCancel`, the radio is gone from what the owner receives (at least 20 dB
    /// below the same pass-thru without it, once the canceller has had three seconds: on a
    /// loaded machine the daemon, without real-time scheduling, takes a while) and the
    /// driver's voice, a 1 kHz tone over the radio, is kept (within 8 dB: the canceller's
    /// suppression of what its filter leaves takes some of a sound that overlaps the far
    /// end). Capabilities offer it at the processing rates.
    @Test func theRadioIsCancelledAndTheDriverKept() async throws {
        let pipewire = try await PipeWireTestSystem.start()
        do {
            try await Self.run(pipewire)
        } catch {
            let logs = pipewire.log("pipewire.log") + pipewire.log("wireplumber.log")
            await pipewire.stop()
            throw HarnessError("\(error)\n--- PipeWire:\n\(logs.suffix(1500))")
        }
        await pipewire.stop()
    }

    static func run(_ pipewire: PipeWireTestSystem) async throws {
        try await pipewire.hearSpeakersAtMicrophone(afterSeconds: 0.1)
        try await pipewire.speakersMonitorSource(named: reference)
        let radio = try pipewire.soundFile(S.music(seconds: 60), rate: rate, name: "radio")
        _ = try pipewire.play(radio, role: "Music")
        // The driver: silent for 5 s, then a 1 kHz tone for 1.5 s.
        let tone = (0 ..< 13 * rate / 2).map { index in
            index < 5 * rate ? 0 : Float(0.25 * sin(2 * Double.pi * 1000 * Double(index) / Double(rate)))
        }
        let driver = try pipewire.soundFile(tone, rate: rate, channels: 1, name: "driver")
        try await ServiceSession.with("earshot-capture", arguments: [
            "--device", "cabin-microphone", "--echo-reference", "echo-reference", "--no-follow-session", "--linger-seconds", "5",
        ], busName: CaptureContract.busName, prepare: { bus in
            var devices = ALSATestDevices(configPath: bus.directory.appendingPathComponent("asound.conf"))
            devices.pipeWire("cabin-microphone", captureNode: "mic")
            devices.pipeWire("echo-reference", captureNode: reference)
            try devices.write()
            return devices.environment.merging(pipewire.environment) { $1 }
        }) { session in
            let capture = CaptureProxy(connection: session.client)
            let offered = try await capture.capabilities().filter(\.echoCancel).map(\.samplingRate)
            #expect(offered.contains(UInt32(rate)), "\(RequestKeys.echoCancel.name) offered at \(offered)")
            var recordings: [Bool: [Float]] = [:]
            for cancelling in [false, true] {
                let voice = try await pipewire.speakIntoMicrophone(driver)
                defer { voice.signal(SIGKILL) }
                var request = AudioPassThruRequest(samplingRate: UInt32(rate), bitsPerSample: 16, maxDurationMs: 7500)
                request.echoCancel = cancelling
                let passThru = try await capture.perform(request)
                var bytes: [UInt8] = []
                for await chunk in passThru { bytes += chunk.data }
                let result = try await passThru.result
                try #require(result.resultCode == .success, "\(result)\n\(session.service.logText.suffix(1500))")
                recordings[cancelling] = S.samples(pcm16: bytes)
            }
            let (off, on) = (try #require(recordings[false]), try #require(recordings[true]))
            try #require(off.count >= 7 * rate && on.count >= 7 * rate, "\(off.count) and \(on.count) samples")
            // The radio alone: after the canceller's first three seconds, before the driver.
            let radioOnly = 3 * rate ..< 47 * rate / 10
            #expect(S.rms(off, radioOnly) > 0.01, "the radio reached the microphone: \(S.rms(off, radioOnly)) RMS")
            let down = S.decibels(S.energy(off, radioOnly) / S.energy(on, radioOnly))
            #expect(down >= 20, "the radio \(down) dB down; capture's log:\n\(session.service.logText.suffix(1500))")
            // The driver: the tone's level in its loudest half second, in each.
            let kept = Self.loudestTone(on) - Self.loudestTone(off)
            #expect(Self.loudestTone(off) > -20, "the driver at \(Self.loudestTone(off)) dB without cancelling")
            #expect(kept >= -8, "the driver at \(kept) dB")
            print("\(RequestKeys.echoCancel.name) on PipeWire: the radio \(down) dB down, the driver at \(kept) dB")
        }
    }

    /// The 1 kHz tone's level (dBFS of its amplitude) in the half second where it is loudest.
    static func loudestTone(_ samples: [Float]) -> Double {
        let window = rate / 2
        return stride(from: 0, to: samples.count - window, by: window / 2).map { start in
            var (c, s) = (0.0, 0.0)
            for index in start ..< start + window {
                let phase = 2 * Double.pi * 1000 * Double(index) / Double(rate)
                c += Double(samples[index]) * cos(phase)
                s += Double(samples[index]) * sin(phase)
            }
            return 20 * log10(max(2 * (c * c + s * s).squareRoot() / Double(window), 1e-9))
        }.max() ?? -180
    }
}
