import EarshotCabinSound
import EarshotContract
import Foundation

/// What `earshot-bench echo` found: each engine on the echo scenarios and on road noise,
/// and the recogniser's verdicts.
struct EchoResults: BenchmarkReport, Sendable {
    /// One engine on one echo scenario.
    struct ScenarioRow: Encodable, Sendable {
        let scenario: String
        let engine: String
        let erleFirstSecondDb: Double
        let erleDb: Double
        /// nil: never converged.
        let convergenceMs: Int?
        let driverDb: Double
        let cpuPerSecondMs: Double
    }

    /// One engine on the driver's voice in road noise.
    struct NoiseRow: Encodable, Sendable {
        let engine: String
        let snrGainDb: Double
        let voiceDb: Double
        let cpuPerSecondMs: Double
    }

    struct Pair: Encodable, Sendable { let off: Double; let on: Double }
    struct Triple: Encodable, Sendable { let clean: Double; let off: Double; let on: Double }

    /// One engine's headline figures (the worst scenario for ERLE and convergence).
    struct EngineSummary: Encodable, Sendable {
        /// nil: not run on the echo scenarios.
        var erleDb: Double?
        /// nil: some scenario never converged, or not run on them.
        var convergenceMs: Int?
        /// The mean over the echo scenarios; nil: not run on them.
        var cpuPerSecondMs: Double?
        var driverWer: Triple?
        var falseCommandsPerMinute: Pair?
        var wholeFileWer: Triple?
        var driverErrors: WordErrors?
        /// Where its pass-thrus ended on silence (the verdict has off's and clean's).
        var silenceEndings: SilenceEndings?
    }

    let seconds: Double
    let roadNoiseSnrDb: Double
    var scenarios: [ScenarioRow] = []
    var noise: [NoiseRow] = []
    var recogniser: RecogniserJudge.Verdict?
    var recogniserNotRun: String?
    /// Why the recogniser's run through earshot-capture was left out, when it was.
    var servicePathNotRun: String?
    /// One group of the scenes through the services: its chunks' latency and the capture
    /// service's CPU per second of audio.
    struct ServicePathCost: Encodable, Sendable {
        let chunks: Int
        let p50Ms: Double
        let p99Ms: Double
        let maxMs: Double
        let cpuPerSecondMs: Double

        init(_ cost: CaptureServicePath.Cost) {
            let summary = LatencySummary(cost.latencies)
            chunks = summary.samples
            p50Ms = summary.p50Microseconds / 1000
            p99Ms = summary.p99Microseconds / 1000
            maxMs = summary.maxMicroseconds / 1000
            cpuPerSecondMs = cost.audioSeconds > 0 ? Double(cost.cpuNanoseconds) / 1e6 / cost.audioSeconds : .nan
        }
    }

    /// The run through the services, alone: pass-thrus over the prompt with echo
    /// cancellation against the same without processing (`CaptureServicePath.costs`), and
    /// what cancelling adds to the p99.
    struct ServicePathCosts: Encodable, Sendable {
        let echoCancelled: ServicePathCost
        let unprocessed: ServicePathCost
        var addedP99Ms: Double { echoCancelled.p99Ms - unprocessed.p99Ms }

        private enum CodingKeys: String, CodingKey { case echoCancelled, unprocessed, addedP99Ms }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(echoCancelled, forKey: .echoCancelled)
            try container.encode(unprocessed, forKey: .unprocessed)
            try container.encode(addedP99Ms, forKey: .addedP99Ms)
        }
    }

    /// Goal: echo cancellation adds less than this to the chunks' p99 (ms).
    static let addedLatencyGoalMs = 2.0

    /// The run through the services' chunk latencies and CPU, when it ran.
    var servicePathChunks: ServicePathCosts?
    /// What the cabin of the run through the services heard late of the prompt (its
    /// speaker's writer behind real time: a loaded machine), in all, ms.
    var servicePathLateMs: Int?
    /// Over the prompt, where the cabin heard the alert service's first frame in each scene,
    /// against where the scene places the far end (ms, later positive): in the first
    /// pass-thru after the services start, and in the later one.
    var servicePathPromptHeardMs: PromptHeard?
    struct PromptHeard: Encodable, Sendable {
        let first: [Int]
        let later: [Int]
    }
    var engines: [String: EngineSummary] = [:]
    /// Rows that process nothing (a microphone as heard), against which no goal is judged:
    /// each the unprocessed of the row it names.
    var unprocessedOf: [String: String] = [:]
    /// The engine that ships, and the peers, in the order the tables give them.
    let engineOrder: [String]
    let shipping: String
    let peer: String

    init(seconds: Double, roadNoiseSnrDb: Double, engineOrder: [String], shipping: String, peer: String) {
        self.seconds = seconds
        self.roadNoiseSnrDb = roadNoiseSnrDb
        self.engineOrder = engineOrder
        self.shipping = shipping
        self.peer = peer
    }

    mutating func add(_ row: ScenarioRow) {
        scenarios.append(row)
        var summary = engines[row.engine] ?? EngineSummary()
        let rows = scenarios.filter { $0.engine == row.engine }
        summary.erleDb = rows.map(\.erleDb).min()
        summary.convergenceMs = rows.contains { $0.convergenceMs == nil } ? nil : rows.compactMap(\.convergenceMs).max()
        summary.cpuPerSecondMs = rows.map(\.cpuPerSecondMs).reduce(0, +) / Double(rows.count)
        engines[row.engine] = summary
    }

    mutating func add(_ verdict: RecogniserJudge.Verdict) {
        recogniser = verdict
        for (name, figures) in verdict.engines {
            var summary = engines[name] ?? EngineSummary()
            summary.driverWer = Triple(clean: verdict.driverClean.percent, off: verdict.driverOff.percent, on: figures.driver.percent)
            summary.wholeFileWer = Triple(clean: verdict.wholeFileClean.percent, off: verdict.wholeFileOff.percent, on: figures.wholeFile.percent)
            summary.falseCommandsPerMinute = Pair(off: verdict.perMinute(verdict.falseCommandsOff), on: verdict.perMinute(figures.falseCommands))
            summary.driverErrors = figures.driver
            summary.silenceEndings = figures.endings
            engines[name] = summary
        }
    }

    /// Goal: processed driver errors within 5 points of clean and at most half of off.
    func driverGoal(_ engine: String) -> Bool? {
        engines[engine]?.driverWer.map { $0.on <= $0.clean + 5 && $0.on <= $0.off / 2 }
    }

    /// Goal: at least 90 % fewer false commands processed than off.
    func falseCommandGoal(_ engine: String) -> Bool? {
        engines[engine]?.falseCommandsPerMinute.map { $0.on <= $0.off / 10 }
    }

    /// Goal: every pass-thru ends on silence after the driver's last word, and within
    /// `SilenceEndings.allowanceMs` of the silence asked for after it.
    func silenceGoal(_ engine: String) -> Bool? {
        engines[engine]?.silenceEndings.map(\.allOnTime)
    }

    /// Every figure of `shipping` at least as good as the peer's: (figure, met) pairs.
    func againstPeer() -> [(String, Bool?)] {
        guard let ours = engines[shipping], let theirs = engines[peer] else { return [] }
        func lower(_ a: Double?, _ b: Double?) -> Bool? { a.flatMap { a in b.map { a <= $0 } } }
        return [
            ("ERLE", ours.erleDb.flatMap { ours in theirs.erleDb.map { ours >= $0 } }),
            ("convergence", theirs.convergenceMs.map { t in ours.convergenceMs.map { $0 <= t } ?? false } ?? true),
            ("driver word errors", lower(ours.driverWer?.on, theirs.driverWer?.on)),
            ("false commands", lower(ours.falseCommandsPerMinute?.on, theirs.falseCommandsPerMinute?.on)),
        ]
    }

    func table() -> String {
        var lines: [String] = []
        lines.append("Echo cancellation, 16 kHz, \(TableFormat.fixed(seconds, 0)) s per scenario (ERLE dB: far end only; "
                     + "driver: level of a voice talking over the far end)")
        let widths = [-30, -23, 12, 12, 13, 12, 14]
        lines.append(TableFormat.row(["scenario", "engine", "ERLE 0-1 s", "ERLE 1 s-", "converged ms", "driver dB", "CPU ms per s"], widths: widths))
        for row in scenarios {
            lines.append(TableFormat.row([row.scenario, row.engine, TableFormat.fixed(row.erleFirstSecondDb, 1), TableFormat.fixed(row.erleDb, 1),
                                          row.convergenceMs.map(String.init) ?? "never", TableFormat.fixed(row.driverDb, 1),
                                          TableFormat.fixed(row.cpuPerSecondMs, 2)], widths: widths))
        }
        lines.append("")
        lines.append("Noise suppression (high), brown road noise at \(TableFormat.fixed(roadNoiseSnrDb, 1)) dB SNR")
        let noiseWidths = [-12, 12, 12, 14]
        lines.append(TableFormat.row(["engine", "SNR gain", "voice dB", "CPU ms per s"], widths: noiseWidths))
        for row in noise {
            lines.append(TableFormat.row([row.engine, TableFormat.fixed(row.snrGainDb, 1), TableFormat.fixed(row.voiceDb, 1),
                                          TableFormat.fixed(row.cpuPerSecondMs, 2)], widths: noiseWidths))
        }
        lines.append("")
        if let verdict = recogniser {
            func rate(_ errors: WordErrors) -> String {
                "\(TableFormat.fixed(errors.percent, 1)) % (S \(errors.substitutions), D \(errors.deletions), I \(errors.insertions))"
            }
            lines.append("Recogniser (pocketsphinx, command grammar): \(verdict.utterances) commands from \(verdict.voices.count) voices "
                         + "(\(verdict.driverClean.words) words) over the \(RecogniserJudge.FarEnd.allCases.map(\.rawValue).joined(separator: ", the ")), "
                         + "with road noise at 5 dB SNR; \(verdict.scenesWithoutDriver) scenes with no driver "
                         + "(\(TableFormat.fixed(verdict.minutesWithoutDriver, 2)) min: \(verdict.farEnds.joined(separator: ", ")))")
            let judgeWidths = [-28, 32, 36, 20]
            lines.append(TableFormat.row(["", "driver's span: word errors", "whole file (far end counted too)", "false commands/min"], widths: judgeWidths))
            lines.append(TableFormat.row(["clean", rate(verdict.driverClean), rate(verdict.wholeFileClean), "-"], widths: judgeWidths))
            lines.append(TableFormat.row(["road noise, no echo", rate(verdict.driverInRoadNoise), rate(verdict.wholeFileInRoadNoise), "-"],
                                         widths: judgeWidths))
            lines.append(TableFormat.row(["off", rate(verdict.driverOff), rate(verdict.wholeFileOff),
                                          TableFormat.fixed(verdict.perMinute(verdict.falseCommandsOff), 1)], widths: judgeWidths))
            for name in engineOrder {
                guard let figures = verdict.engines[name] else { continue }
                lines.append(TableFormat.row([name, rate(figures.driver), rate(figures.wholeFile),
                                              TableFormat.fixed(verdict.perMinute(figures.falseCommands), 1)], widths: judgeWidths))
            }
            lines.append("")
            lines.append("The driver's span by far end: word errors")
            let farEnds = RecogniserJudge.FarEnd.allCases.map(\.rawValue)
            let byFarEndWidths = [-28] + farEnds.map { _ in 28 }
            lines.append(TableFormat.row([""] + farEnds, widths: byFarEndWidths))
            for (label, name) in [("clean", "clean"), ("road noise, no echo", "road"), ("off", "off")] + engineOrder.map({ ($0, $0) }) {
                guard let figures = verdict.driverByFarEnd[name] else { continue }
                lines.append(TableFormat.row([label] + farEnds.map { figures[$0].map(rate) ?? "-" }, widths: byFarEndWidths))
            }
            lines.append("")
            let keys = CaptureContract.Manager.Keys.self
            lines.append("Ending on silence: a pass-thru with \(keys.bargeIn.name) and \(keys.endOnSilenceMs.name) \(verdict.endOnSilenceMs), "
                         + "from the far end's start, "
                         + "earshot-capture's tracker on the signal it hands on; on time: after the driver's last word and at most "
                         + "\(verdict.endOnSilenceMs + SilenceEndings.allowanceMs) ms after it")
            let endingWidths = [-28, 7, 9, 6, 7, 34]
            lines.append(TableFormat.row(["", "early", "on time", "late", "never", "past the silence: median, worst"], widths: endingWidths))
            func endingRow(_ name: String, _ endings: SilenceEndings) -> String {
                let past = endings.medianPastSilenceMs.map { "\($0), \(endings.worstPastSilenceMs!) ms" } ?? "-"
                return TableFormat.row([name, "\(endings.early)", "\(endings.onTime)", "\(endings.late)", "\(endings.never)", past], widths: endingWidths)
            }
            lines.append(endingRow("clean", verdict.endingsClean))
            lines.append(endingRow("road noise, no echo", verdict.endingsInRoadNoise))
            lines.append(endingRow("off", verdict.endingsOff))
            for name in engineOrder {
                guard let figures = verdict.engines[name] else { continue }
                lines.append(endingRow(name, figures.endings))
            }
            lines.append("")
            lines.append("By far end: false commands with no driver (all its scenes), and endings on time of the scenes with the driver "
                         + "(early, late, never)")
            let scenesOf = verdict.farEnds
            let splitWidths = [-28] + scenesOf.map { _ in 24 }
            lines.append(TableFormat.row([""] + scenesOf, widths: splitWidths))
            for (label, name) in [("off", "off")] + engineOrder.map({ ($0, $0) }) {
                guard let commands = verdict.falseCommandsByFarEnd[name] else { continue }
                let endings = verdict.endingsByFarEnd[name] ?? [:]
                lines.append(TableFormat.row([label] + scenesOf.map { far in
                    let ended = endings[far].map { "; \($0.onTime) of \($0.scenes) (\($0.early), \($0.late), \($0.never))" } ?? ""
                    return "\(commands[far] ?? 0)\(ended)"
                }, widths: splitWidths))
            }
            if let why = servicePathNotRun { lines.append("Through earshot-capture: not run (\(why))") }
            if let late = servicePathLateMs {
                lines.append("Through earshot-capture: the cabin heard \(late) ms of the alert service's speech late, over every scene "
                             + "(0: it kept up with real time)")
            }
            if let heard = servicePathPromptHeardMs {
                func spread(_ values: [Int]) -> String {
                    let sorted = values.sorted()
                    guard let low = sorted.first, let high = sorted.last else { return "none" }
                    return "median \(sorted[sorted.count / 2]) (\(low) to \(high)) over \(sorted.count)"
                }
                lines.append("Through earshot-capture: the prompt's first frame heard against the scene's far end, ms (later positive): "
                             + "first pass-thru \(spread(heard.first)); later pass-thru \(spread(heard.later))")
            }
        } else if let why = recogniserNotRun {
            lines.append("Recogniser: not run (\(why))")
        }
        lines.append("")
        func verdict(_ met: Bool?) -> String { met.map { $0 ? "MET" : "NOT MET" } ?? "not measured" }
        for name in engineOrder {
            guard let summary = engines[name] else { continue }
            var goals: [String] = []
            if let erle = summary.erleDb {
                goals.append("ERLE >= 25 dB after the first second (worst \(TableFormat.fixed(erle, 1))): " + verdict(erle >= 25))
            }
            if let row = noise.first(where: { $0.engine == name }) {
                goals.append("noise: SNR gain >= 10 dB, voice within 3 dB: " + verdict(row.snrGainDb >= 10 && abs(row.voiceDb) <= 3))
            }
            goals.append("driver's word errors within 5 points of clean and at most half of off: " + verdict(driverGoal(name)))
            goals.append("false commands at least 90 % fewer than off: " + verdict(falseCommandGoal(name)))
            goals.append("every pass-thru ends on silence on time: " + verdict(silenceGoal(name)))
            if let processed = unprocessedOf[name] {
                let on = engines[processed]?.driverWer?.on, off = summary.driverWer?.on
                lines.append("\(processed) against its own microphone's \(off.map { TableFormat.fixed($0, 1) } ?? "?") % unprocessed: "
                             + "driver's word errors \(on.map { TableFormat.fixed($0, 1) } ?? "?") %, at most half: "
                             + verdict(on.flatMap { on in off.map { on <= $0 / 2 } }))
                continue
            }
            lines.append("Goals, \(name): " + goals.joined(separator: "; "))
        }
        let peerFigures = againstPeer()
        if !peerFigures.isEmpty {
            lines.append("Goal, \(shipping) at least as good as \(peer) on every figure: "
                         + peerFigures.map { "\($0.0) \(verdict($0.1))" }.joined(separator: ", "))
        }
        if let costs = servicePathChunks {
            func group(_ cost: ServicePathCost) -> String {
                "\(cost.chunks) chunks p50 \(TableFormat.fixed(cost.p50Ms, 2)), p99 \(TableFormat.fixed(cost.p99Ms, 2)), "
                    + "max \(TableFormat.fixed(cost.maxMs, 2)) ms, capture's CPU \(TableFormat.fixed(cost.cpuPerSecondMs, 1)) ms per s of audio"
            }
            lines.append("Through earshot-capture, chunk latency (arrival at the client less the time the chunk was read) over the prompt, "
                         + "\(CaptureServicePath.costScenes) scenes each run alone: echo cancelled (\(CaptureContract.Manager.Keys.bargeIn.name) and the prompt): "
                         + group(costs.echoCancelled)
                         + "; no processing, the alert service speaking the same prompt beside it: " + group(costs.unprocessed) + ". Goal, echo cancellation adds < \(TableFormat.fixed(Self.addedLatencyGoalMs, 0)) ms to the p99 ("
                         + TableFormat.fixed(costs.addedP99Ms, 2) + " ms): " + verdict(costs.addedP99Ms < Self.addedLatencyGoalMs))
        }
        lines.append("Noise suppression's chunk latency and CPU against arecord: earshot-bench capture, configuration p.")
        return lines.joined(separator: "\n")
    }
}
