import ArgumentParser
import EarshotCabinSound
import EarshotContract
import EarshotSpeechProcessing
import Foundation
import Glibc

/// `earshot-bench echo`: echo cancellation and noise suppression, WebRTC's as
/// earshot-capture runs it against PipeWire's module-echo-cancel and SpeexDSP, on the same
/// sound in the same run, judged by levels and by a recogniser.
struct EchoCancellationBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo",
        abstract: "Echo cancellation and noise suppression: earshot-capture's (WebRTC) against PipeWire's and SpeexDSP's.",
        discussion: """
            Makes a car's sound at 16 kHz (CabinSound): the prompt as Earshot renders it and \
            music, each through a cabin's echo path (decaying noise after 40, 80 or 120 ms, \
            and the same 80 ms path with the far end given 300 ms early, as a prompt sent to an \
            output with a buffer), a driver's voice (espeak-ng, another voice), brown road \
            noise at 5 dB SNR. Four engines process the same files: earshot-capture's \
            (WebRTC's audio processing through SpeechProcessor, 100 ms reads in 10 ms frames, \
            the far end as handed over to play), PipeWire's module-echo-cancel as it runs by \
            default (its SPA plugin aec/libspa-aec-webrtc.so with the plugin's defaults, noise \
            suppression on, 10 ms blocks of the microphone and of the far end as it plays out), \
            SpeexDSP's canceller with its preprocessor (residual echo and noise suppression), \
            and SpeexDSP's adaptive filter alone on the far end as it plays out (no suppression \
            of any kind: what a linear filter by itself keeps of a voice). The benchmark reports:
              - ERLE: how far the far end is down (dB) in its first second and after it, with \
            only the echo at the microphone (and a -60 dBFS floor),
              - convergence: the first 100 ms window from which every window with echo (30 dB \
            above the floor) is 25 dB down,
              - the driver talking over the far end: the voice's level in the output (dB),
              - noise suppression (high): the SNR gain and the voice's level,
              - CPU per second of audio (this thread's CPU time),
              - a recogniser's verdicts (pocketsphinx with a command grammar, when installed; \
            about three minutes): 44 commands from two voices spoken over the prompt, an alert or \
            the radio (heard 250 ms late through the cabin) with road noise at 5 dB SNR, \
            unprocessed and processed (\(CaptureContract.Manager.Keys.bargeIn.name)'s echo \
            cancellation and high noise suppression); word errors of the driver's span alone \
            (substitutions, deletions, insertions), against the same voice at the same moment \
            in silence; the whole file's word errors (the far end's and the noise's commands \
            counted too); false commands per minute in the same scenes with no driver; and \
            where a pass-thru with \(CaptureContract.Manager.Keys.endOnSilenceMs.name) 500 ends on each scene with the driver \
            (earshot-capture's own silence tracker on each engine's signal). The same with \
            echo cancellation alone through the services themselves, in real time (a private \
            bus, earshot-alerts and earshot-capture for each scene, three at once): over the \
            prompt, \(CaptureContract.Manager.Keys.bargeIn.name): the alert service speaks it \
            into a live cabin and hands capture what it played; over an alert or the radio, \
            \(CaptureContract.Manager.Keys.echoCancel.name), against the cabin's speakers' \
            monitor (capture's --echo-reference).
            Goals: ERLE >= 25 dB after the first second; SNR gain >= 10 dB with the voice \
            within 3 dB; the driver's word errors processed within 5 points of clean and at \
            most half of unprocessed; at least 90 % fewer false commands processed than \
            unprocessed; every pass-thru ending after the driver's last word and within 800 \
            ms of it; earshot-capture's engine at least as good as PipeWire's on every \
            figure. The engine that ships is earshot-capture's.
            """)

    @Flag(name: .customLong("no-recogniser"), help: "Skip the recogniser (about three minutes).")
    var noRecogniser = false

    @Option(name: .customLong("keep-utterances"), help: ArgumentHelp(
        "Write each command the recogniser judges, clean, unprocessed and processed by earshot-capture's engine, as WAV files into this directory, with spans.tsv (where the driver speaks).",
        valueName: "directory"))
    var keepUtterances: String?

    @Option(help: "Seconds of far end per scenario.")
    var seconds: Double = 8

    @Flag(help: "Print the figures as JSON.")
    var json = false

    @Flag(help: "Leave out the recogniser's run through earshot-capture and earshot-alerts (in real time: a private bus, both services and a live cabin for each scene, three at once).")
    var noServicePath = false

    /// earshot-capture's engine as a pass-thru with `BargeIn` alone runs it (the recogniser's
    /// verdicts only: the echo scenarios run every engine without noise suppression).
    static let echoOnly = "Earshot, echo only"
    /// The same, on a canceller that has just heard the same scene once: its filter has
    /// converged on this cabin and far end before the scene starts, as one kept from an
    /// earlier pass-thru in the same cabin would have (the recogniser's verdicts only).
    static let echoOnlyConverged = "Earshot, echo only, converged before"
    /// The same through the services: over the prompt a pass-thru with `BargeIn` and the
    /// prompt, earshot-alerts speaking it into a live cabin and handing capture what it
    /// played; over an alert or the radio one with `EchoCancel`, against the speakers'
    /// monitor (the recogniser's verdicts only).
    static let throughService = "earshot-capture, echo only"
    /// The same on services that had recorded the scene once before: the canceller starts
    /// from the echo delay the first pass-thru measured, as most pass-thrus of a running
    /// head unit do.
    static let throughServiceLater = "earshot-capture, a later pass-thru"
    /// What earshot-capture's microphone heard in those pass-thrus, unprocessed: the scenes
    /// as the services' own timing made them (where the prompt played), the off of the two
    /// rows above.
    static let heardThroughService = "earshot-capture's microphone, unprocessed"
    static let heardThroughServiceLater = "earshot-capture's microphone, a later pass-thru, unprocessed"

    /// The engines, in the order the tables give them.
    enum Engine: String, CaseIterable {
        case earshot = "Earshot", pipewire = "PipeWire", speex = "SpeexDSP", linear = "SpeexDSP, linear only"

        /// Whether the engine has noise suppression to measure.
        var suppressesNoise: Bool { self != .linear }

        /// `near` processed against `far`, handed over at sample 0 and played out from
        /// `playsAt` (an output's buffer between): the engine's output and its CPU time (s).
        /// Earshot's and SpeexDSP's get `far` as handed over; PipeWire's as its module gets it,
        /// at the sink, when it plays, and so does SpeexDSP's filter alone (`linear`: no
        /// suppression of any kind, a reference for what the filter itself keeps of a voice).
        /// PipeWire's always suppresses noise too, as its module does.
        func process(near: [Float], far: [Float], playsAt: Int, echoCancel: Bool, noise: Bool) throws -> (output: [Float], cpu: Double) {
            let rate = CabinSound.rate
            var output = near
            // The far end as it plays out, for the engines that take it at the sink.
            var playingOut: [Float] { CabinSound.placed(far, at: playsAt, count: far.count + playsAt) }
            let before = EchoCancellationBenchmarkCommand.threadCPUSeconds()
            switch self {
            case .earshot:
                let processor = try SpeechProcessor(rate: rate, echoCancel: echoCancel, noise: noise ? .high : .off)
                if echoCancel { processor.play(far, startedAt: 0) }
                let block = rate / 10
                for start in stride(from: 0, to: output.count, by: block) {
                    var part = Array(output[start ..< min(output.count, start + block)])
                    processor.process(&part)
                    output.replaceSubrange(start ..< start + part.count, with: part)
                }
            case .pipewire:
                try PipeWireEchoPeer(rate: rate).process(near: &output, far: playingOut)
            case .speex:
                SpeexEchoPeer(rate: rate, echoCancel: echoCancel, noiseSuppressionDb: noise ? -30 : nil).process(near: &output, far: echoCancel ? far : [])
            case .linear:
                SpeexEchoPeer(rate: rate, echoCancel: echoCancel, noiseSuppressionDb: nil, linearOnly: true)
                    .process(near: &output, far: echoCancel ? playingOut : [])
            }
            return (output, EchoCancellationBenchmarkCommand.threadCPUSeconds() - before)
        }
    }

    func run() async throws {
        typealias S = CabinSound
        let rate = S.rate
        progress("rendering the prompt, the music and the driver's voice")
        var prompt = try S.prompt("Please say the name of the piece after the tone. You can also say cancel to stop, or "
                                  + "help to hear what you can say. Recording starts when the prompt is over.")
        let count = S.whole(Int(seconds * Double(rate)))
        prompt = S.placed(prompt, at: 0, count: count)
        let music = S.placed(S.music(seconds: seconds), at: 0, count: count)
        let voice = try S.speech("turn left at the next intersection and call home", voice: "en-us+f3")
        let talkStart = count / 2
        let driver = S.placed(S.scaled(voice, toRMS: 0.08), at: talkStart, count: count)
        let talking = talkStart ..< min(count, talkStart + voice.count)
        let floor = S.brownNoise(count: count, rms: 0.001, seed: 5)

        struct Scenario { let name: String; let far: [Float]; let delayMs: Int; let early: Int }
        var scenarios: [Scenario] = []
        for delay in [40, 80, 120] { scenarios.append(Scenario(name: "prompt, \(delay) ms", far: prompt, delayMs: delay, early: 0)) }
        scenarios.append(Scenario(name: "prompt, 80 ms + 300 ms early", far: prompt, delayMs: 80, early: rate * 3 / 10))
        for delay in [40, 120] { scenarios.append(Scenario(name: "music, \(delay) ms", far: music, delayMs: delay, early: 0)) }

        // Noise suppression: the voice in road noise at 5 dB SNR.
        let noiseOnly = rate ..< talkStart - rate / 10
        let road = S.brownNoise(count: count, rms: S.rms(driver, talking) / Float(pow(10, 5.0 / 20)))
        let noisy = S.sum(driver, road)
        func snr(_ signal: [Float]) -> Double { S.snr(signal, speaking: talking, quiet: noiseOnly) }
        var results = EchoResults(seconds: seconds, roadNoiseSnrDb: snr(noisy),
                                  engineOrder: [Engine.earshot.rawValue, Self.echoOnly, Self.echoOnlyConverged, Self.throughService, Self.throughServiceLater,
                                                Self.heardThroughService, Self.heardThroughServiceLater] + Engine.allCases.dropFirst().map(\.rawValue),
                                  shipping: Engine.earshot.rawValue, peer: Engine.pipewire.rawValue)
        let perSecond = 1000 / (Double(count) / Double(rate))

        for scenario in scenarios {
            progress("echo: \(scenario.name)")
            let heard = S.scaled(S.convolve(scenario.far, S.room(delayMs: scenario.delayMs)), toRMS: 0.08)
            let echo = S.placed(heard, at: scenario.early, count: count)
            let microphone = S.sum(echo, floor)
            let withDriver = S.sum(echo, driver, floor)
            for engine in Engine.allCases {
                let (output, cpu) = try engine.process(near: microphone, far: scenario.far, playsAt: scenario.early, echoCancel: true, noise: false)
                let first = S.decibels(S.energy(microphone, 0 ..< rate) / S.energy(output, 0 ..< rate))
                let after = S.decibels(S.energy(microphone, rate ..< count) / S.energy(output, rate ..< count))
                let window = rate / 10
                // Windows where the echo stands 30 dB above the floor count: elsewhere the floor,
                // which nothing cancels, is most of what there is.
                var converged: Int?
                for start in stride(from: 0, to: count - window, by: window).reversed() {
                    let range = start ..< start + window
                    guard S.energy(echo, range) > 1000 * S.energy(floor, range) else { continue }
                    if S.decibels(S.energy(microphone, range) / S.energy(output, range)) < 25 { break }
                    converged = start
                }
                let (talk, _) = try engine.process(near: withDriver, far: scenario.far, playsAt: scenario.early, echoCancel: true, noise: false)
                results.add(EchoResults.ScenarioRow(
                    scenario: scenario.name, engine: engine.rawValue, erleFirstSecondDb: first, erleDb: after,
                    convergenceMs: converged.map { $0 * 1000 / rate },
                    driverDb: S.decibels(S.energy(talk, talking) / S.energy(driver, talking)), cpuPerSecondMs: cpu * perSecond))
            }
        }
        for engine in Engine.allCases where engine.suppressesNoise {
            let (output, cpu) = try engine.process(near: noisy, far: [], playsAt: 0, echoCancel: false, noise: true)
            results.noise.append(EchoResults.NoiseRow(engine: engine.rawValue, snrGainDb: snr(output) - snr(noisy),
                                                      voiceDb: S.voiceLevel(output, of: driver, speaking: talking, quiet: noiseOnly),
                                                      cpuPerSecondMs: cpu * perSecond))
        }
        if noRecogniser {
            results.recogniserNotRun = "--no-recogniser"
        } else if RecogniserJudge.available {
            // As a pass-thru with BargeIn and NoiseSuppression runs: echo cancellation and high
            // noise suppression.
            var engines = Engine.allCases.map { engine in
                RecogniserJudge.Engine(name: engine.rawValue) { scene in
                    try engine.process(near: scene.microphone, far: scene.played, playsAt: scene.playsAt, echoCancel: true, noise: true).output
                }
            }
            // A pass-thru with BargeIn alone: echo cancellation, no noise suppression.
            engines.insert(RecogniserJudge.Engine(name: Self.echoOnly) { scene in
                try Engine.earshot.process(near: scene.microphone, far: scene.played, playsAt: scene.playsAt, echoCancel: true, noise: false).output
            }, at: 1)
            engines.insert(RecogniserJudge.Engine(name: Self.echoOnlyConverged) { scene in
                // The scene twice on one canceller, the far end with it; the second time is judged.
                let count = scene.microphone.count
                let far = CabinSound.placed(scene.played, at: 0, count: count) + scene.played
                let output = try Engine.earshot.process(near: scene.microphone + scene.microphone, far: far, playsAt: scene.playsAt,
                                                        echoCancel: true, noise: false).output
                return Array(output[count ..< 2 * count])
            }, at: 2)
            let servicePath = CaptureServicePath.available && !noServicePath ? CaptureServicePath(prompt: RecogniserJudge.promptText) : nil
            if let servicePath {
                engines.insert(RecogniserJudge.Engine(name: Self.throughService, process: { try await servicePath.output(of: $0) },
                                                      prepare: { servicePath.start($0) }), at: 3)
                engines.insert(RecogniserJudge.Engine(name: Self.throughServiceLater) { try await servicePath.laterOutput(of: $0) }, at: 4)
                results.unprocessedOf = [Self.heardThroughService: Self.throughService,
                                         Self.heardThroughServiceLater: Self.throughServiceLater]
                engines.insert(RecogniserJudge.Engine(name: Self.heardThroughService) { try await servicePath.heard(in: $0, later: false) }, at: 5)
                engines.insert(RecogniserJudge.Engine(name: Self.heardThroughServiceLater) { try await servicePath.heard(in: $0, later: true) }, at: 6)
            } else {
                results.servicePathNotRun = noServicePath ? "--no-service-path"
                    : "\(CaptureServicePath.executables.joined(separator: " and ")) not built next to earshot-bench"
            }
            results.add(try await RecogniserJudge.measure(engines: engines, keepingIn: keepUtterances.map { URL(fileURLWithPath: $0) },
                                                          progress: progress))
            if let servicePath {
                results.servicePathLateMs = servicePath.lateSpeakerMs
                let heard = servicePath.promptHeardMs
                results.servicePathPromptHeardMs = .init(first: heard.first, later: heard.later)
                progress("chunk latency and CPU through earshot-capture: \(CaptureServicePath.costScenes) scenes over the prompt, alone, with and without echo cancellation")
                results.servicePathChunks = try await servicePath.costs()
            }
        } else {
            results.recogniserNotRun = "\(RecogniserJudge.program) or \(RecogniserJudge.model) missing: Debian's pocketsphinx and pocketsphinx-en-us"
        }
        try results.print(json: json)
    }

    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
