import EarshotContract
import Foundation

/// What `earshot-bench quiet` found: each call after a quiet spell and warm.
struct QuietResults: BenchmarkReport, Sendable {
    /// PresentAlert with speech: its round trip and the service's presentation → first frame.
    struct AlertTiming: Encodable, Sendable {
        let roundTrip: Double
        let presentationToFirstFrame: Double
        /// An upper bound on call → first frame written.
        var toFirstFrame: Double { roundTrip + presentationToFirstFrame }
    }

    /// One round's calls: (after quiet, warm).
    struct Round: Sendable {
        let alert: (AlertTiming, AlertTiming)
        let drop: (Double, Double)
        let firstChunk: (Double, Double)
    }

    /// A call's figures after quiet and warm, in ms.
    struct Pair: Encodable, Sendable {
        var afterQuiet: [Double] = []
        var warm: [Double] = []
        var afterQuietFigures: Figures { Figures(afterQuiet) }
        var warmFigures: Figures { Figures(warm) }

        enum CodingKeys: String, CodingKey { case afterQuiet, warm, afterQuietFigures, warmFigures }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(afterQuiet, forKey: .afterQuiet)
            try container.encode(warm, forKey: .warm)
            try container.encode(afterQuietFigures, forKey: .afterQuietFigures)
            try container.encode(warmFigures, forKey: .warmFigures)
        }
    }

    struct Calls: Encodable, Sendable {
        /// Call → first audio frame (upper bound), and its presentation → first frame part.
        var alertToFirstFrame = Pair()
        var alertPresentationToFirstFrame = Pair()
        var drop = Pair()
        var firstChunk = Pair()
        /// The first chunk's time less the chunk's own length of audio: what capture adds.
        var firstChunkOverhead = Pair()

        mutating func append(_ round: Round, chunkMs: UInt32) {
            alertToFirstFrame.afterQuiet.append(round.alert.0.toFirstFrame)
            alertToFirstFrame.warm.append(round.alert.1.toFirstFrame)
            alertPresentationToFirstFrame.afterQuiet.append(round.alert.0.presentationToFirstFrame)
            alertPresentationToFirstFrame.warm.append(round.alert.1.presentationToFirstFrame)
            drop.afterQuiet.append(round.drop.0)
            drop.warm.append(round.drop.1)
            firstChunk.afterQuiet.append(round.firstChunk.0)
            firstChunk.warm.append(round.firstChunk.1)
            firstChunkOverhead.afterQuiet.append(round.firstChunk.0 - Double(chunkMs))
            firstChunkOverhead.warm.append(round.firstChunk.1 - Double(chunkMs))
        }
    }

    /// A service's VmRSS 2 s after its start, after the last quiet spell and after that
    /// round's calls.
    struct Memory: Encodable, Sendable {
        let idleKiB: UInt64
        let afterQuietKiB: UInt64
        let afterCallsKiB: UInt64
    }

    let processors: Int
    let rounds: Int
    let quietSeconds: Double
    let droppedPageCache: Bool
    let sentence: String
    let chunkMs: UInt32
    let calls: Calls
    let memory: [String: Memory]

    /// The goals: the spoken alert after quiet under 150 ms to its first frame (p99); the
    /// others within 2× of warm (p50 and p99).
    static let alertGoalMilliseconds = 150.0
    static let warmRatioGoal = 2.0
    static let dropName = PiecesContract.Manager.drop.name

    func table() -> String {
        let widths = [-44, 9, 9, 9, 9, 9, 9, 9, 9]
        var lines = ["""
            \(rounds) rounds, each \(TableFormat.fixed(quietSeconds, 0)) s without calls\(droppedPageCache ? " and the page cache dropped" : ""), \
            then each call after quiet and at once again (warm); \(processors) processors; ms
            """]
        lines.append(TableFormat.row(["", "quiet p50", "p99", "max", "warm p50", "p99", "max", "× p50", "× p99"], widths: widths))
        func row(_ name: String, _ pair: Pair) -> (line: String, p50: Double, p99: Double, quietP99: Double) {
            let quiet = pair.afterQuietFigures, warm = pair.warmFigures
            let p50 = quiet.p50 / warm.p50, p99 = quiet.p99 / warm.p99
            let line = TableFormat.row([name, TableFormat.fixed(quiet.p50, 1), TableFormat.fixed(quiet.p99, 1), TableFormat.fixed(quiet.max, 1),
                                        TableFormat.fixed(warm.p50, 1), TableFormat.fixed(warm.p99, 1), TableFormat.fixed(warm.max, 1),
                                        TableFormat.fixed(p50, 2), TableFormat.fixed(p99, 2)], widths: widths)
            return (line, p50, p99, quiet.p99)
        }
        let alert = row("\(AlertsContract.Manager.presentAlert.name) (speech) -> first audio frame", calls.alertToFirstFrame)
        let presentation = row("  of which presentation -> first frame", calls.alertPresentationToFirstFrame)
        let drop = row("\(Self.dropName), 10 MiB WAV", calls.drop)
        let chunk = row("\(CaptureContract.Manager.performAudioPassThru.name) -> first chunk (\(chunkMs) ms)", calls.firstChunk)
        let overhead = row("  of which beyond the chunk's \(chunkMs) ms", calls.firstChunkOverhead)
        lines += [alert.line, presentation.line, drop.line, chunk.line, overhead.line]
        func verdict(_ met: Bool) -> String { met ? "met" : "NOT met" }
        lines.append("goal: spoken alert after quiet < \(Int(Self.alertGoalMilliseconds)) ms to first audio at p99: "
                     + "\(TableFormat.fixed(alert.quietP99, 1)) ms, \(verdict(alert.quietP99 < Self.alertGoalMilliseconds))")
        for (name, figures) in [(Self.dropName, drop), ("first chunk", chunk), ("first chunk beyond its audio", overhead)] {
            let met = figures.p50 <= Self.warmRatioGoal && figures.p99 <= Self.warmRatioGoal
            lines.append("goal: \(name) after quiet within \(Int(Self.warmRatioGoal))× of warm (p50 and p99): "
                         + "\(TableFormat.fixed(figures.p50, 2))×, \(TableFormat.fixed(figures.p99, 2))×, \(verdict(met))")
        }
        let memoryLine: String = memory.keys.sorted().map { (name: String) -> String in
            let entry = memory[name]!
            return "\(name) " + [entry.idleKiB, entry.afterQuietKiB, entry.afterCallsKiB]
                .map { TableFormat.fixed(Double($0) / 1024, 1) }.joined(separator: " / ")
        }.joined(separator: ", ")
        lines.append("VmRSS at start (before any call) / after the last quiet spell / after its calls (MiB): " + memoryLine)
        return lines.joined(separator: "\n")
    }
}
