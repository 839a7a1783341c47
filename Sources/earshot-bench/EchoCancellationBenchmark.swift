import ArgumentParser
import EarshotCabinSound
import EarshotContract
import EarshotSpeechProcessing
import Foundation
import Glibc

/// `earshot-bench echo`: echo cancellation and noise suppression, WebRTC's (the
/// plugin earshot-capture loads) against SpeexDSP's, on the same sound in the same run.
struct EchoCancellationBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo",
        abstract: "Echo cancellation and noise suppression: WebRTC (earshot-capture's) against SpeexDSP.",
        discussion: """
            Makes a car's sound at 16 kHz (CabinSound): the prompt as Earshot renders it and \
            music, each through a cabin's echo path (decaying noise after 40, 80 or 120 ms, \
            and the same 80 ms path with the far end given 300 ms early, as a prompt sent to an \
            output with a buffer), a driver's voice (espeak-ng, another voice), brown road \
            noise at 5 dB SNR. Each engine processes the same files in 10 ms frames, as \
            earshot-capture does, and the benchmark reports:
              - ERLE: how far the far end is down (dB) in its first second and after it, with \
            only the echo at the microphone (and a -60 dBFS floor),
              - convergence: the first 100 ms window from which every window with echo (30 dB \
            above the floor) is 25 dB down,
              - the driver talking over the far end: the voice's level in the output (dB),
              - noise suppression (high): the SNR gain and the voice's level,
              - CPU per second of audio (this thread's CPU time),
              - a recogniser's word error rate (pocketsphinx with a command grammar, when \
            installed): 22 commands spoken over the prompt (heard 250 ms late, 80 ms of \
            cabin) with road noise at 5 dB SNR, with processing off and on (\(CaptureContract.Manager.Keys.bargeIn.name)'s echo \
            cancellation and high noise suppression), against the commands alone.
            Goals (those of the pass-thru's keys): ERLE >= 25 dB after the first second, SNR \
            gain >= 10 dB with the voice within 3 dB; error rate with processing within 5 \
            points of the clean commands and at most half of it without. The engine that \
            ships is WebRTC's.
            """)

    @Flag(name: .customLong("no-recogniser"), help: "Skip the word error rates (about two minutes).")
    var noRecogniser = false

    @Option(name: .customLong("keep-utterances"), help: ArgumentHelp(
        "Write each command the recogniser judges, clean, unprocessed and processed, as WAV files into this directory.",
        valueName: "directory"))
    var keepUtterances: String?

    @Option(help: "Seconds of far end per scenario.")
    var seconds: Double = 8

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

        enum Engine: String, CaseIterable { case webrtc = "WebRTC", speex = "SpeexDSP" }
        func process(_ engine: Engine, near: [Float], far: [Float], echoCancel: Bool, noise: Bool) throws -> (output: [Float], cpu: Double) {
            var output = near
            let before = threadCPUSeconds()
            switch engine {
            case .webrtc:
                let processor = try SpeechProcessor(rate: rate, echoCancel: echoCancel, noise: noise ? .high : .off)
                if echoCancel { processor.play(far, startedAt: 0) }
                let block = rate / 10
                for start in stride(from: 0, to: output.count, by: block) {
                    var part = Array(output[start ..< min(output.count, start + block)])
                    processor.process(&part)
                    output.replaceSubrange(start ..< start + part.count, with: part)
                }
            case .speex:
                let peer = SpeexEchoPeer(rate: rate, echoCancel: echoCancel, noiseSuppressionDb: noise ? -30 : nil)
                peer.process(near: &output, far: echoCancel ? far : [])
            }
            return (output, threadCPUSeconds() - before)
        }

        print("Echo cancellation, 16 kHz, \(TableFormat.fixed(seconds, 0)) s per scenario (ERLE dB: far end only; "
              + "driver: level of a voice talking over the far end)")
        let widths = [-30, 10, 12, 12, 13, 12, 14]
        print(TableFormat.row(["scenario", "engine", "ERLE 0-1 s", "ERLE 1 s-", "converged ms", "driver dB", "CPU ms per s"], widths: widths))
        var worstAfter: [Engine: Double] = [:]
        for scenario in scenarios {
            let heard = S.scaled(S.convolve(scenario.far, S.room(delayMs: scenario.delayMs)), toRMS: 0.08)
            let echo = S.placed(heard, at: scenario.early, count: count)
            let microphone = S.sum(echo, floor)
            let withDriver = S.sum(echo, driver, floor)
            for engine in Engine.allCases {
                let (output, cpu) = try process(engine, near: microphone, far: scenario.far, echoCancel: true, noise: false)
                let first = S.decibels(S.energy(microphone, 0 ..< rate) / S.energy(output, 0 ..< rate))
                let after = S.decibels(S.energy(microphone, rate ..< count) / S.energy(output, rate ..< count))
                worstAfter[engine] = min(worstAfter[engine] ?? .infinity, after)
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
                let (talk, _) = try process(engine, near: withDriver, far: scenario.far, echoCancel: true, noise: false)
                let kept = S.decibels(S.energy(talk, talking) / S.energy(driver, talking))
                print(TableFormat.row([scenario.name, engine.rawValue, TableFormat.fixed(first, 1), TableFormat.fixed(after, 1),
                                       converged.map { String($0 * 1000 / rate) } ?? "never", TableFormat.fixed(kept, 1),
                                       TableFormat.fixed(cpu * 1000 / (Double(count) / Double(rate)), 2)], widths: widths))
            }
        }

        // Noise suppression: the voice in road noise at 5 dB SNR.
        let noiseOnly = rate ..< talkStart - rate / 10
        let road = S.brownNoise(count: count, rms: S.rms(driver, talking) / Float(pow(10, 5.0 / 20)))
        let noisy = S.sum(driver, road)
        func snr(_ signal: [Float]) -> Double { S.snr(signal, speaking: talking, quiet: noiseOnly) }
        print("")
        print("Noise suppression (high), brown road noise at \(TableFormat.fixed(snr(noisy), 1)) dB SNR")
        let noiseWidths = [-10, 12, 12, 14]
        print(TableFormat.row(["engine", "SNR gain", "voice dB", "CPU ms per s"], widths: noiseWidths))
        var noiseGoal: [Engine: Bool] = [:]
        for engine in Engine.allCases {
            let (output, cpu) = try process(engine, near: noisy, far: [], echoCancel: false, noise: true)
            let level = S.voiceLevel(output, of: driver, speaking: talking, quiet: noiseOnly)
            let gain = snr(output) - snr(noisy)
            noiseGoal[engine] = gain >= 10 && abs(level) <= 3
            print(TableFormat.row([engine.rawValue, TableFormat.fixed(gain, 1), TableFormat.fixed(level, 1),
                                   TableFormat.fixed(cpu * 1000 / (Double(count) / Double(rate)), 2)], widths: noiseWidths))
        }
        if !noRecogniser {
            print("")
            if RecogniserJudge.available {
                let rates = try await RecogniserJudge.measure(prompt: prompt, keepingIn: keepUtterances.map { URL(fileURLWithPath: $0) }, progress: progress)
                func percent(_ rate: (errors: Int, words: Int)) -> Double { 100 * Double(rate.errors) / Double(max(1, rate.words)) }
                let clean = percent(rates.clean), off = percent(rates.off), on = percent(rates.on)
                print("Word error rate, pocketsphinx with a command grammar, \(RecogniserJudge.commands.count) commands "
                      + "(\(rates.clean.words) words): clean \(TableFormat.fixed(clean, 1)) %, over the prompt and road noise "
                      + "\(TableFormat.fixed(off, 1)) % unprocessed, \(TableFormat.fixed(on, 1)) % processed (WebRTC)")
                print("Goal: processed within 5 points of clean and at most half of unprocessed: "
                      + (on <= clean + 5 && on <= off / 2 ? "MET" : "NOT MET"))
            } else {
                print("Word error rate: not measured (\(RecogniserJudge.program) or \(RecogniserJudge.model) missing: "
                      + "Debian's pocketsphinx and pocketsphinx-en-us)")
            }
        }
        print("")
        for engine in Engine.allCases {
            let erle = worstAfter[engine] ?? 0
            print("Goals, \(engine.rawValue): ERLE >= 25 dB after the first second (worst \(TableFormat.fixed(erle, 1))): "
                  + (erle >= 25 ? "MET" : "NOT MET") + "; noise: SNR gain >= 10 dB, voice within 3 dB: "
                  + (noiseGoal[engine] == true ? "MET" : "NOT MET"))
        }
    }

    private func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private func progress(_ message: String) {
        FileHandle.standardError.write(Data("earshot-bench: \(message)\n".utf8))
    }
}
