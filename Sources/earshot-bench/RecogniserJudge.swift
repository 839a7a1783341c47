import ContractCore
import EarshotCabinSound
import EarshotSpeechProcessing
import EarshotTestHarness
import Foundation

/// A real recogniser as the judge of the speech processing: pocketsphinx (Debian's
/// `pocketsphinx`, `pocketsphinx-en-us`) with a small command grammar, as in-car voice
/// control runs it, on a driver's commands spoken over the prompt with road noise, with
/// processing off and on, against the same commands alone.
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

    static let grammar = """
        #JSGF V1.0;
        grammar commands;
        public <command> = <action> [<connector> <action>];
        <connector> = and | then;
        <action> = turn (left | right) [at the next intersection] | call (home | work | mom) | play (music | the radio)
            | navigate to (work | home | the airport) | stop | cancel | repeat that;
        """

    static var available: Bool { FileManager.default.isExecutableFile(atPath: program) && FileManager.default.fileExists(atPath: model) }

    struct Rates {
        var clean = (errors: 0, words: 0)
        var off = (errors: 0, words: 0)
        var on = (errors: 0, words: 0)
    }

    /// Word error rates (%) over `commands`; each utterance judged is also written into
    /// `keepingIn` when given (`NN-clean.wav`, `NN-off.wav`, `NN-on.wav`).
    static func measure(prompt: [Float], keepingIn kept: URL? = nil, progress: (String) -> Void) async throws -> Rates {
        typealias S = CabinSound
        let rate = S.rate
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-recogniser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        if let kept { try FileManager.default.createDirectory(at: kept, withIntermediateDirectories: true) }
        let grammarFile = directory.appendingPathComponent("commands.jsgf")
        try Data(grammar.utf8).write(to: grammarFile)
        let lead = rate / 4
        let room = S.room(delayMs: 80)
        var rates = Rates()
        for (index, command) in commands.enumerated() {
            progress("recognising \(index + 1) of \(commands.count): \(command)")
            // Rendered before the driver's voice: libespeak-ng keeps a variant across voices.
            let voice = try S.speech(command, voice: "en-us+f3")
            let talkStart = lead + rate * 3 / 2
            let count = S.whole(max(lead + prompt.count, talkStart + voice.count) + rate / 2)
            let driver = S.placed(S.scaled(voice, toRMS: 0.08), at: talkStart, count: count)
            let talking = talkStart ..< talkStart + voice.count
            let echo = S.placed(S.scaled(S.convolve(prompt, room), toRMS: 0.08), at: lead, count: count)
            let road = S.brownNoise(count: count, rms: S.rms(driver, talking) / Float(pow(10, 5.0 / 20)), seed: UInt64(index + 1))
            let microphone = S.sum(echo, driver, road)
            let processor = try SpeechProcessor(rate: rate, echoCancel: true, noise: .high)
            processor.play(prompt, startedAt: 0)
            var processed = microphone
            for start in stride(from: 0, to: count, by: rate / 10) {
                var part = Array(processed[start ..< min(count, start + rate / 10)])
                processor.process(&part)
                processed.replaceSubrange(start ..< start + part.count, with: part)
            }
            for (signal, keyPath, name) in [(S.placed(S.scaled(voice, toRMS: 0.08), at: rate / 4, count: voice.count + rate / 2), \Rates.clean, "clean"),
                                            (microphone, \Rates.off, "off"), (processed, \Rates.on, "on")] {
                let file = kept?.appendingPathComponent((index < 9 ? "0" : "") + "\(index + 1)-\(name).wav")
                    ?? directory.appendingPathComponent("utterance.wav")
                try Data(PCMWave.header(sampleRate: UInt32(rate), channels: 1, bitsPerSample: 16, dataBytes: UInt64(signal.count * 2))
                         + S.pcm16(signal)).write(to: file)
                let heard = try await ToolRun.run([program, "-infile", file.path, "-jsgf", grammarFile.path,
                                                   "-dict", model + "/cmudict-en-us.dict", "-hmm", model + "/en-us",
                                                   "-logfn", "/dev/null"])
                let errors = wordErrors(command, heard)
                progress("  heard: \(heard.split(separator: "\n").joined(separator: " | ")) (\(errors) errors)")
                rates[keyPath: keyPath].errors += errors
                rates[keyPath: keyPath].words += command.split(separator: " ").count
            }
        }
        return rates
    }

    /// Substitutions, insertions and deletions between the words of `reference` and
    /// `hypothesis` (a Levenshtein distance over words).
    static func wordErrors(_ reference: String, _ hypothesis: String) -> Int {
        let wanted = reference.lowercased().split(whereSeparator: \.isWhitespace)
        let heard = hypothesis.lowercased().split(whereSeparator: \.isWhitespace)
        var previous = Array(0 ... heard.count)
        for (i, word) in wanted.enumerated() {
            var current = [i + 1] + [Int](repeating: 0, count: heard.count)
            for j in heard.indices {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (word == heard[j] ? 0 : 1))
            }
            previous = current
        }
        return previous[heard.count]
    }
}
