import CaptureCore
import ContractCore
import EarshotCabinSound
import EarshotTestHarness
import Foundation

/// A real recogniser as the judge of the speech processing: pocketsphinx (Debian's
/// `pocketsphinx`, `pocketsphinx-en-us`) with a small command grammar, as in-car voice
/// control runs it.
///
/// Two verdicts, each on scenes of the same length (the far end playing from the start, its
/// echo heard 250 ms later through a cabin, brown road noise throughout):
///   - the driver's word errors: 44 commands from two voices, each spoken over the prompt,
///     an alert or the radio; only the driver's span is decoded (the mixer's own indices,
///     the same span for clean, off and on), and clean is the driver's voice at the same
///     moment in a file of the same length with nothing else. The whole file decoded is
///     kept as a third figure: it counts what the grammar makes of the far end and the noise
///     around the driver too.
///   - false commands: the same far ends and road noise with no driver, decoded whole; every
///     command heard is a false one.
/// And where a pass-thru that ends on silence would end on each scene with the driver
/// (earshot-capture's own tracker and detector on the processed signal).
struct RecogniserJudge {
    static let program = "/usr/bin/pocketsphinx_continuous"
    static let model = "/usr/share/pocketsphinx/model/en-us"

    /// What the driver says: every one a sentence of `grammar`.
    static let commands = [
        "turn left at the next intersection and call home", "turn right", "call work", "play the radio",
        "navigate to the airport", "stop", "cancel", "repeat that", "turn left and call mom", "play music",
        "navigate to work then call home", "turn right at the next intersection", "call home", "navigate to home",
        "play music then turn left", "call mom", "turn left", "navigate to the airport and play the radio",
        "turn right then call work", "stop and repeat that", "play the radio and call home", "cancel then navigate to work",
    ]
    /// The driver's voices (espeak-ng): every command is said by each.
    static let voices = ["en-us+f3", "en-us+m3"]

    static let grammar = """
        #JSGF V1.0;
        grammar commands;
        public <command> = <action> [<connector> <action>];
        <connector> = and | then;
        <action> = turn (left | right) [at the next intersection] | call (home | work | mom) | play (music | the radio)
            | navigate to (work | home | the airport) | stop | cancel | repeat that;
        """

    static var available: Bool { FileManager.default.isExecutableFile(atPath: program) && FileManager.default.fileExists(atPath: model) }

    /// What plays in the cabin besides the driver.
    enum FarEnd: String, CaseIterable, Codable, Sendable {
        /// Earshot's pass-thru prompt, as the alert service renders it.
        case prompt
        /// A spoken alert, as the alert service renders it.
        case alert
        /// Music with a presenter talking over it.
        case radio
    }

    /// One scene as an engine gets it.
    struct Scene: Sendable {
        /// Its place in the run: the scenes with the driver first, then those without.
        let index: Int
        /// Everything the microphone hears.
        let microphone: [Float]
        /// The far end as handed over to play, from sample 0; empty when none plays.
        let played: [Float]
        /// Where the far end's echo starts at the microphone (`lead`).
        let playsAt: Int
        let farEnd: FarEnd?
        /// The cabin's echo path for the far end (`S.room`), scaled as the scene's echo is.
        let room: [Float]
        /// The microphone without the far end's echo: the driver and the road.
        let besidesFarEnd: [Float]
    }

    /// A processing engine: a scene in, the processed microphone out. `prepare` is told every
    /// scene of the run before the first is asked for (an engine that runs in real time may
    /// start them ahead, several at once).
    struct Engine: Sendable {
        let name: String
        let process: @Sendable (_ scene: Scene) async throws -> [Float]
        var prepare: @Sendable (_ scenes: [Scene]) -> Void = { _ in }
    }

    /// One engine's figures.
    struct EngineVerdict: Codable, Sendable {
        var driver = WordErrors()
        var wholeFile = WordErrors()
        var falseCommands = 0
        var endings = SilenceEndings()
    }

    struct Verdict: Codable, Sendable {
        var utterances = 0
        var voices = RecogniserJudge.voices
        var farEnds = FarEnd.allCases.map(\.rawValue) + ["road noise only"]
        /// The driver's span decoded: clean, in the road noise alone (no far end: what an
        /// engine that took away every echo and left the noise would give), and unprocessed.
        var driverClean = WordErrors()
        var driverInRoadNoise = WordErrors()
        var driverOff = WordErrors()
        /// The whole file decoded, with the driver: clean and unprocessed.
        var wholeFileClean = WordErrors()
        var wholeFileInRoadNoise = WordErrors()
        var wholeFileOff = WordErrors()
        /// Scenes with no driver, and how long they are together.
        var scenesWithoutDriver = 0
        var minutesWithoutDriver = 0.0
        var falseCommandsOff = 0
        /// Where a pass-thru with `endOnSilenceMs` ended on each scene with the driver.
        var endOnSilenceMs = RecogniserJudge.endOnSilenceMs
        var endingsClean = SilenceEndings()
        var endingsInRoadNoise = SilenceEndings()
        var endingsOff = SilenceEndings()
        var engines: [String: EngineVerdict] = [:]
        /// The driver's span decoded, by condition (clean, road, off, or an engine's name)
        /// and far end.
        var driverByFarEnd: [String: [String: WordErrors]] = [:]
        /// The same conditions' commands heard with no driver, and where their pass-thrus
        /// ended, by far end.
        var falseCommandsByFarEnd: [String: [String: Int]] = [:]
        var endingsByFarEnd: [String: [String: SilenceEndings]] = [:]

        func perMinute(_ commands: Int) -> Double { minutesWithoutDriver > 0 ? Double(commands) / minutesWithoutDriver : 0 }
    }

    typealias S = CabinSound
    static let rate = S.rate
    /// The far end starts at 0; its echo reaches the microphone `lead` later (a buffered
    /// output), through the cabin.
    static let lead = rate / 4
    static let farSeconds = 8.0
    static let count = S.whole(lead + Int(farSeconds * Double(rate)) + rate / 2)
    static let echoRMS: Float = 0.08
    /// The pass-thru's `EndOnSilenceMs` for the endings: half a second, a pause a driver
    /// makes between words only rarely.
    static let endOnSilenceMs = 500

    /// Where a pass-thru with `BargeIn` and `endOnSilenceMs`, recording from the far end's
    /// start, ends on `signal` (the sample after its last read; nil: not within it):
    /// earshot-capture's `SilenceTracker` with the detector it uses, fed reads of its silence
    /// period (`CapturePeriod.silenceWatchMs`) of the signal as the service hands it on.
    static func silenceEnd(of signal: [Float]) -> Int? {
        var tracker = SilenceTracker(endAfterMs: UInt32(endOnSilenceMs),
                                     format: .init(sampleRate: UInt32(rate), channels: 1, bitsPerSample: 16),
                                     detector: EnergyVoiceDetector(sampleRate: UInt32(rate)))
        let read = rate * Int(CapturePeriod.silenceWatchMs) / 1000
        let bytes = S.pcm16(signal)
        for start in stride(from: 0, to: signal.count, by: read) {
            let end = min(signal.count, start + read)
            if tracker.feed(bytes[2 * start ..< 2 * end]) { return end }
        }
        return nil
    }

    /// The pass-thru's prompt.
    static let promptText = "Please say the name of the piece after the tone. You can also say cancel to stop, or "
        + "help to hear what you can say. Recording starts when the prompt is over."

    /// The far ends, each `farSeconds` long from sample 0.
    static func farEnds() throws -> [FarEnd: [Float]] {
        let farCount = Int(farSeconds * Double(rate))
        let prompt = try S.prompt(promptText)
        let alert = try S.prompt("Low fuel. The nearest filling station is twelve kilometres ahead, on the right. "
                                 + "Traffic on the ring road is heavy: expect ten minutes of delay.")
        let presenter = try S.speech("You are listening to the drive home. After the news, the weather for the weekend, "
                                     + "and the travel news on the motorways and the ring road.", voice: "en+m7")
        let radio = S.sum(S.scaled(S.music(seconds: farSeconds), toRMS: 0.05),
                          S.placed(S.scaled(presenter, toRMS: 0.08), at: rate / 2, count: farCount))
        return [.prompt: S.placed(prompt, at: 0, count: farCount), .alert: S.placed(alert, at: 0, count: farCount),
                .radio: S.placed(radio, at: 0, count: farCount)]
    }

    /// The far end's echo at the microphone: through a cabin of `delayMs`, from `lead`; and
    /// that cabin's echo path, scaled as the echo was.
    static func echo(of far: [Float], delayMs: Int) -> (echo: [Float], room: [Float]) {
        let room = S.room(delayMs: delayMs)
        let heard = S.convolve(far, room)
        let gain = echoRMS / max(S.rms(heard, 0 ..< heard.count), 1e-9)
        return (S.placed(heard.map { $0 * gain }, at: lead, count: count), room.map { $0 * gain })
    }

    /// A scene with the driver: its spoken words, and where they are.
    struct Utterance: Sendable {
        let voice: String
        let command: String
        let farEnd: FarEnd
        let driver: [Float]
        let road: [Float]
        let talking: Range<Int>
    }

    /// Every scene of the run, in order: the driver's, then those without a driver.
    static func scenes(far: [FarEnd: [Float]]) throws -> (utterances: [Utterance], scenes: [Scene], withoutDriver: [(FarEnd?, Int)]) {
        let delays = [40, 80, 120]
        var utterances: [Utterance] = []
        var scenes: [Scene] = []
        for (index, (voice, command)) in voices.flatMap({ voice in commands.map { (voice, $0) } }).enumerated() {
            let farEnd = FarEnd.allCases[index % FarEnd.allCases.count]
            let spoken = S.scaled(try S.speech(command, voice: voice), toRMS: 0.08)
            let talkStart = lead + rate + (index % 5) * rate / 4
            let talking = talkStart ..< min(count, talkStart + spoken.count)
            let driver = S.placed(spoken, at: talkStart, count: count)
            let road = S.brownNoise(count: count, rms: S.rms(driver, talking) / Float(pow(10, 5.0 / 20)), seed: UInt64(index + 1))
            let (echo, room) = Self.echo(of: far[farEnd]!, delayMs: delays[(index / 3) % delays.count])
            let besides = S.sum(driver, road)
            utterances.append(Utterance(voice: voice, command: command, farEnd: farEnd, driver: driver, road: road, talking: talking))
            scenes.append(Scene(index: scenes.count, microphone: S.sum(echo, besides), played: far[farEnd]!, playsAt: lead,
                                farEnd: farEnd, room: room, besidesFarEnd: besides))
        }
        let kinds: [FarEnd?] = FarEnd.allCases + [nil]
        let withoutDriver = kinds.flatMap { kind in (delays + [80]).map { (kind, $0) } }
        for (index, (kind, delay)) in withoutDriver.enumerated() {
            let road = S.brownNoise(count: count, rms: echoRMS / Float(pow(10, 5.0 / 20)), seed: UInt64(100 + index))
            let echo = kind.map { Self.echo(of: far[$0]!, delayMs: delay) }
            scenes.append(Scene(index: scenes.count, microphone: echo.map { S.sum($0.echo, road) } ?? road, played: kind.map { far[$0]! } ?? [],
                                playsAt: lead, farEnd: kind, room: echo?.room ?? [], besidesFarEnd: road))
        }
        return (utterances, scenes, withoutDriver)
    }

    static func measure(engines: [Engine], keepingIn kept: URL? = nil, progress: @escaping @Sendable (String) -> Void) async throws -> Verdict {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-recogniser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        if let kept { try FileManager.default.createDirectory(at: kept, withIntermediateDirectories: true) }
        let grammarFile = directory.appendingPathComponent("commands.jsgf")
        try Data(grammar.utf8).write(to: grammarFile)
        let decoder = Decoder(directory: directory, grammar: grammarFile)
        let far = try farEnds()
        var verdict = Verdict()
        for engine in engines { verdict.engines[engine.name] = EngineVerdict() }
        var spans = "utterance\tvoice\tfar end\tcommand\tdriver from sample\tto sample\n"
        let (utterances, scenes, withoutDriver) = try Self.scenes(far: far)
        for engine in engines { engine.prepare(scenes) }

        // The driver's words.
        for (index, utterance) in utterances.enumerated() {
            let (voice, command, farEnd, driver, talking) = (utterance.voice, utterance.command, utterance.farEnd, utterance.driver, utterance.talking)
            let scene = scenes[index]
            var heard: [(name: String, whole: [Float])] = [("clean", driver), ("road", S.sum(driver, utterance.road)), ("off", scene.microphone)]
            for engine in engines { heard.append((engine.name, try await engine.process(scene))) }
            let signals = heard.map { Array($0.whole[talking]) } + heard.map(\.whole)
            let decoded = try await decoder.decode(signals)
            let number = String(format: "%02d", index + 1)
            spans += "\(number)\t\(voice)\t\(farEnd.rawValue)\t\(command)\t\(talking.lowerBound)\t\(talking.upperBound)\n"
            for (position, (name, whole)) in heard.enumerated() {
                let driverErrors = WordErrors(reference: command, hypothesis: decoded[position].joined(separator: " "))
                let wholeErrors = WordErrors(reference: command, hypothesis: decoded[heard.count + position].joined(separator: " "))
                let ending = silenceEnd(of: whole)
                verdict.driverByFarEnd[name, default: [:]][farEnd.rawValue, default: WordErrors()] += driverErrors
                func tally(_ endings: inout SilenceEndings) {
                    endings.add(end: ending, driverEnd: talking.upperBound, endOnSilenceMs: endOnSilenceMs, rate: rate)
                }
                tally(&verdict.endingsByFarEnd[name, default: [:]][farEnd.rawValue, default: SilenceEndings()])
                switch name {
                case "clean": verdict.driverClean += driverErrors; verdict.wholeFileClean += wholeErrors; tally(&verdict.endingsClean)
                case "road": verdict.driverInRoadNoise += driverErrors; verdict.wholeFileInRoadNoise += wholeErrors; tally(&verdict.endingsInRoadNoise)
                case "off": verdict.driverOff += driverErrors; verdict.wholeFileOff += wholeErrors; tally(&verdict.endingsOff)
                default:
                    verdict.engines[name]!.driver += driverErrors
                    verdict.engines[name]!.wholeFile += wholeErrors
                    tally(&verdict.engines[name]!.endings)
                }
                progress("  \(number) \(voice) over the \(farEnd.rawValue), \(name): driver heard \"\(decoded[position].joined(separator: " | "))\" "
                         + "(\(driverErrors.errors)), whole file \"\(decoded[heard.count + position].joined(separator: " | "))\" (\(wholeErrors.errors)), "
                         + "ended on silence " + (ending.map { "\(($0 - talking.upperBound) * 1000 / rate) ms after the driver" } ?? "never"))
                if let kept, name == "clean" || name == "off" || name == engines.first?.name {
                    try wave(whole).write(to: kept.appendingPathComponent("\(number)-\(name == engines.first?.name ? "on" : name).wav"))
                }
            }
            progress("recognised \(index + 1) of \(utterances.count): \(command) (\(voice), over the \(farEnd.rawValue))")
            verdict.utterances += 1
        }
        if let kept { try Data(spans.utf8).write(to: kept.appendingPathComponent("spans.tsv")) }

        // No driver: what the grammar makes of the far ends and the road.
        for (index, (kind, delay)) in withoutDriver.enumerated() {
            let scene = scenes[utterances.count + index]
            var signals = [scene.microphone]
            for engine in engines { signals.append(try await engine.process(scene)) }
            let decoded = try await decoder.decode(signals)
            verdict.falseCommandsOff += decoded[0].count
            for (engine, commands) in zip(engines, decoded.dropFirst()) { verdict.engines[engine.name]!.falseCommands += commands.count }
            let far = kind?.rawValue ?? "road noise only"
            for (name, commands) in zip(["off"] + engines.map(\.name), decoded) {
                verdict.falseCommandsByFarEnd[name, default: [:]][far, default: 0] += commands.count
            }
            verdict.scenesWithoutDriver += 1
            verdict.minutesWithoutDriver += Double(count) / Double(rate) / 60
            progress("no driver, \(kind?.rawValue ?? "road noise only") (\(delay) ms): off heard \(decoded[0]); "
                     + zip(engines, decoded.dropFirst()).map { "\($0.name) \($1)" }.joined(separator: ", "))
        }
        return verdict
    }

    static func wave(_ signal: [Float]) -> Data {
        Data(PCMWave.header(sampleRate: UInt32(rate), channels: 1, bitsPerSample: 16, dataBytes: UInt64(signal.count * 2)) + S.pcm16(signal))
    }

    /// pocketsphinx on WAV files, two at a time (the machine's cores).
    struct Decoder: Sendable {
        let directory: URL
        let grammar: URL

        /// The commands heard in each signal, one per utterance the decoder found.
        func decode(_ signals: [[Float]]) async throws -> [[String]] {
            try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
                var results = [[String]](repeating: [], count: signals.count)
                var next = 0
                func start() {
                    guard next < signals.count else { return }
                    let (index, signal) = (next, signals[next])
                    next += 1
                    group.addTask {
                        let file = directory.appendingPathComponent("\(UUID().uuidString).wav")
                        try RecogniserJudge.wave(signal).write(to: file)
                        defer { try? FileManager.default.removeItem(at: file) }
                        let heard = try await ToolRun.run([RecogniserJudge.program, "-infile", file.path, "-jsgf", grammar.path,
                                                           "-dict", RecogniserJudge.model + "/cmudict-en-us.dict",
                                                           "-hmm", RecogniserJudge.model + "/en-us", "-logfn", "/dev/null"])
                        return (index, heard.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
                    }
                }
                start()
                start()
                while let (index, heard) = try await group.next() {
                    results[index] = heard
                    start()
                }
                return results
            }
        }
    }
}
