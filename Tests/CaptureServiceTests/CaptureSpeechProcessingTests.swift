import ContractCore
import EarshotCabinSound
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// Noise suppression and barge-in over the bus, on a microphone the test mixes: a driver's
/// voice (espeak-ng, another voice), road noise, and for barge-in the alert service's own
/// speech through a live cabin (`CabinLoop`). Figures are measured on what the owner
/// received against the parts the microphone was given (it plays them from their first
/// sample, so the recording's sample i is their sample i).
@Suite(.timeLimit(.minutes(2))) struct CaptureSpeechProcessingTests {
    typealias S = CabinSound
    static let rate = S.rate
    static let driverText = "turn left at the next intersection and call home"
    static let promptText = "Say the name of the piece after the tone. You can also say cancel to stop, or help to hear "
        + "what you can say. Recording starts when the prompt is over, unless you talk over it."

    /// The driver's voice, made once.
    static let driverVoice: Result<[Float], any Error> = Result { try S.speech(driverText, voice: "en-us+f3") }

    static func request(durationMs: Int, _ configure: (inout AudioPassThruRequest) -> Void = { _ in }) -> AudioPassThruRequest {
        CaptureFixture.request(rate: UInt32(rate), bits: 16, maxMs: UInt32(durationMs), configure)
    }

    /// Road noise at 5 dB SNR: with `NoiseSuppression high` the SNR improves by at least
    /// 10 dB and the voice's level stays within 3 dB.
    @Test func highNoiseSuppressionCleansRoadNoise() async throws {
        let start = 3 * Self.rate
        let (driver, microphone, speaking) = S.voiceInRoadNoise(try Self.driverVoice.get(), at: start)
        let count = microphone.count
        try await CaptureFixture.with(input: S.pcm16(microphone)) { capture in
            #expect(try !capture.service.maps("libwebrtc_audio_processing"), "WebRTC's module mapped before any processing")
            let recording = try await capture.record(Self.request(durationMs: count * 1000 / Self.rate) { $0.noiseSuppression = .high })
            #expect(try capture.service.maps("libwebrtc_audio_processing"), "the processing is not WebRTC's module")
            #expect(recording.result.resultCode == .success, "\(recording.result)")
            let output = S.samples(pcm16: recording.bytes)
            try #require(output.count == count, "\(output.count) samples of \(count)")
            let quiet = Self.rate ..< start - Self.rate / 10
            func snr(_ signal: [Float]) -> Double { S.snr(signal, speaking: speaking, quiet: quiet) }
            let level = S.voiceLevel(output, of: driver, speaking: speaking, quiet: quiet)
            #expect(snr(output) - snr(microphone) >= 10, "SNR \(snr(microphone)) → \(snr(output)) dB")
            #expect(abs(level) <= 3, "the voice at \(level) dB")
        }
    }

    /// `Capabilities` says, for each rate, which processing a pass-thru may ask for: all of
    /// it at a processing rate on a mono input with the plugin installed; `off` alone where
    /// the plugin is missing (and such a request is refused, naming where it was looked
    /// for), at other rates, and on a stereo input.
    @Test(arguments: ["installed", "missing", "stereo"])
    func capabilitiesSayWhatProcessingIsAvailable(_ setting: String) async throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-no-plugin-\(UUID().uuidString)").path
        try await CaptureFixture.with(input: S.pcm16(S.brownNoise(count: Self.rate, rms: 0.05)), channels: setting == "stereo" ? 2 : nil,
                                      environment: setting == "missing" ? ["EARSHOT_PLUGIN_DIR": empty] : [:]) { capture in
            let entries = try await capture.capture.capabilities()
            #expect(!entries.isEmpty)
            var processed: Set<UInt32> = []
            // No echo reference here: no rate offers EchoCancel.
            #expect(entries.allSatisfy { !$0.echoCancel })
            for entry in entries {
                let rate = entry.samplingRate
                let levels = entry.noiseSuppression, bargeIn = entry.bargeIn
                if setting == "installed", [8000, 16000, 44100, 48000].contains(rate) {
                    #expect(levels == ["off", "moderate", "high"] && bargeIn == true, "\(rate) Hz: \(String(describing: levels)), \(String(describing: bargeIn))")
                    processed.insert(rate)
                } else {
                    #expect(levels == ["off"] && bargeIn == false, "\(rate) Hz: \(String(describing: levels)), \(String(describing: bargeIn))")
                }
            }
            if setting == "installed" { #expect(processed.contains(16000), "16000 Hz among \(entries.count) entries") }
            if setting == "missing" {
                let error = await #expect(throws: EarshotError.self) {
                    _ = try await capture.start(Self.request(durationMs: 500) { $0.noiseSuppression = .high })
                }
                #expect(error?.name == EarshotErrorName.unsupportedResource.name && error?.message.contains(empty) == true,
                        "\(String(describing: error))")
            }
        }
    }

    /// With every processing key at its default, or set off, the samples are exactly the
    /// microphone's.
    @Test(arguments: [false, true])
    func processingOffGivesTheMicrophoneExactly(explicitly: Bool) async throws {
        let microphone = S.sum(S.brownNoise(count: Self.rate, rms: 0.05), S.music(seconds: 1))
        try await CaptureFixture.with(input: S.pcm16(microphone)) { capture in
            let recording: CaptureFixture.Recording
            if explicitly {
                // The client leaves keys at their defaults out: set explicitly, they are sent raw.
                let watcher = try await CaptureFixture.subscribe(capture.client)
                let path = try await capture.start(raw: CaptureFixture.rawRequest(maxMs: 1000, [
                    RequestKeys.samplingRate.name: .uint32(UInt32(Self.rate)),
                    RequestKeys.noiseSuppression.name: .string("off"), RequestKeys.bargeIn.name: .boolean(false),
                ]))
                recording = try await CaptureFixture.collect(watcher, path: path)
            } else {
                recording = try await capture.record(Self.request(durationMs: 1000))
            }
            #expect(recording.bytes == S.pcm16(microphone))
            // Nothing of the processing was loaded.
            #expect(try !capture.service.maps("libwebrtc_audio_processing"), "WebRTC's module mapped without processing")
        }
    }

    /// `BargeIn` on its real path: the alert service speaks the prompt into a cabin whose
    /// microphone the capture service reads, and the canceller gets what was played
    /// (`PlayedAudio`, placed by `StartedAtMonotonicUs`), not a rendering of its own.
    /// Recording starts with the prompt, the prompt's sound is cancelled (at least 25 dB down
    /// once the canceller has had two seconds of it) and a driver talking over it is in the
    /// result. The prompt reaches the microphone after the speaker's 100 ms buffer and 80 ms
    /// of cabin: beyond what the canceller reaches alone, so the service measures that delay
    /// first.
    @Test func aDriverTalkingOverThePromptIsHeardAndThePromptIsNot() async throws {
        let voice = try Self.driverVoice.get()
        let count = S.whole(9 * Self.rate)
        let talkStart = count - voice.count - Self.rate / 2
        let driver = S.placed(S.scaled(voice, toRMS: 0.08), at: talkStart, count: count)
        let scene = S.sum(driver, S.brownNoise(count: count, rms: 0.001))
        let room = S.room(delayMs: 80).map { $0 * 0.5 }
        try await CabinServices.with(scene: scene, room: room, rate: Self.rate, lingerSeconds: 5) { services in
            let (session, cabin, alerts) = (services.session, services.cabin, services.alerts)
            let f = CaptureFixture(bus: session.bus, service: session.service, client: session.client, input: cabin.microphone)
            let recording = try await f.record(Self.request(durationMs: count * 1000 / Self.rate) {
                $0.bargeIn = true
                $0.initialPrompt = [.text(Self.promptText)]
            })
            let (made, echo) = cabin.stop()
            await alerts.shutdown()
            #expect(recording.result.resultCode == .success, "\(recording.result)\ncapture's log:\n\(session.service.logText.suffix(2000))\nthe alert service's log:\n\(alerts.logText.suffix(2000))")
            // The microphone FIFO is read from its first sample: the recording's sample i
            // is the cabin's sample i.
            let output = S.samples(pcm16: recording.bytes)
            try #require(output.count == count, "recording from the prompt's start: \(output.count) samples of \(count)")
            try #require(made.count >= count, "the cabin kept up: \(made.count) samples made for \(count) read")
            let heard = try #require(cabin.speakerHeardFrom, "the prompt never played")
            let promptOnly = heard + 2 * Self.rate ..< talkStart
            try #require(promptOnly.count >= Self.rate, "the prompt alone for \(promptOnly.count) samples")
            #expect(S.rms(echo, promptOnly) > 0.02, "the prompt's echo at \(S.rms(echo, promptOnly)) RMS")
            let down = S.decibels(S.energy(made, promptOnly) / S.energy(output, promptOnly))
            #expect(down >= 25, "the prompt \(down) dB down (\(cabin.lateSpeakerSamples) samples of it heard late); capture's log:\n\(session.service.logText.suffix(1500))")
            let talking = talkStart ..< talkStart + voice.count
            let kept = S.decibels(S.energy(output, talking) / S.energy(driver, talking))
            // The canceller's suppression of what its filter leaves takes some of a voice
            // that overlaps the prompt: 3.0-3.1 dB measured (4.3-4.6 with moderate
            // suppression); the prompt 31.8-34.4 dB down (36.8-37.9).
            #expect(kept >= -8, "the driver at \(kept) dB")
        }
    }
}
