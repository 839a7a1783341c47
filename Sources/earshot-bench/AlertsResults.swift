import EarshotContract
import Foundation

/// Order statistics of one set of measurements, in the unit the values were given in.
struct Figures: Encodable, Sendable {
    let samples: Int
    let p50: Double
    let p99: Double
    /// The 99.9th percentile (nearest rank: the maximum below 1000 samples).
    let p999: Double
    let mean: Double
    let min: Double
    let max: Double

    init(_ values: [Double]) {
        let sorted = values.sorted()
        samples = sorted.count
        p50 = nearestRank(sorted, 0.50) ?? .nan
        p99 = nearestRank(sorted, 0.99) ?? .nan
        p999 = nearestRank(sorted, 0.999) ?? .nan
        mean = sorted.isEmpty ? .nan : sorted.reduce(0, +) / Double(sorted.count)
        min = sorted.first ?? .nan
        max = sorted.last ?? .nan
    }
}

/// One `PresentAlert` round-trip phase: N clients, each its own connection, calling at once.
struct AlertRoundTripResult: Encodable, Sendable {
    let clients: Int
    let callsPerClient: Int
    /// Calls that got a reply (an object path).
    let calls: Int
    /// Calls that failed (an error reply or no reply).
    let errors: Int
    let wallSeconds: Double
    let callsPerSecond: Double
    /// Every replied call, then split by how the alert fared (its first `Completed`).
    let allMicroseconds: Figures
    let acceptedMicroseconds: Figures
    let rejectedMicroseconds: Figures
    /// `accepted`, the rejection reasons (`rate-limited`, `queue-full`, `capture-active`),
    /// and `unknown` for alerts whose `Completed` was not seen.
    let outcomes: [String: Int]

    var accepted: Int { outcomes["accepted"] ?? 0 }
    var rejected: Int { outcomes.filter { $0.key != "accepted" && $0.key != "unknown" }.values.reduce(0, +) }
}

/// The first-frame phase: `Speak` one sentence after another, and the espeak-ng command
/// writing the same words to a WAV file after each one.
struct FirstFrameResult: Encodable, Sendable {
    let sentence: String
    let runs: Int
    let warmupRuns: Int
    let outputDevice: String
    let outputPace: String
    let outputRate: UInt32
    /// From the service's log: `alert N: first audio frame written X ms after presentation`.
    let firstFrameMilliseconds: [Double]
    let firstFrame: Figures
    /// Measured alerts whose log had no first-frame line.
    let missingFirstFrame: Int
    /// The measured alerts' `Completed` result codes.
    let resultCodes: [String: Int]
    /// Client side: the `Speak` call's round-trip, and from the call to `Completed`.
    let speakRoundTrip: Figures
    let speakToCompleted: Figures
    /// What the measured alerts wrote to the speaker's file, in seconds of audio.
    let audioSecondsWritten: Double
    let espeakCommand: [String]
    let espeakMilliseconds: [Double]
    let espeak: Figures
    let espeakFailures: Int

    /// The service's first-frame p50 over the espeak-ng command's p50.
    var ratio: Double { firstFrame.p50 / espeak.p50 }
}

struct AlertsBenchmarkResults: BenchmarkReport, Sendable {
    static let firstFrameGoalMilliseconds = 150.0

    let processors: Int
    let priority: String
    let alertText: String
    let warmupCalls: Int
    let roundTrips: [AlertRoundTripResult]
    let firstFrame: FirstFrameResult
    /// earshot-alerts' memory at the end of the run, in KiB.
    let serviceRssKiB: UInt64?
    let serviceHwmKiB: UInt64?

    var firstFrameGoalMet: Bool { firstFrame.firstFrame.p99 < Self.firstFrameGoalMilliseconds && firstFrame.missingFirstFrame == 0 }

    private enum CodingKeys: String, CodingKey {
        case processors, priority, alertText, warmupCalls, roundTrips, firstFrame, serviceRssKiB, serviceHwmKiB, goals
    }

    private struct Goals: Encodable {
        let firstFrameP99MillisecondsBelow: Double
        let firstFrameMet: Bool
        let firstFrameToEspeakCommandP50Ratio: Double
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(processors, forKey: .processors)
        try container.encode(priority, forKey: .priority)
        try container.encode(alertText, forKey: .alertText)
        try container.encode(warmupCalls, forKey: .warmupCalls)
        try container.encode(roundTrips, forKey: .roundTrips)
        try container.encode(firstFrame, forKey: .firstFrame)
        try container.encodeIfPresent(serviceRssKiB, forKey: .serviceRssKiB)
        try container.encodeIfPresent(serviceHwmKiB, forKey: .serviceHwmKiB)
        try container.encode(Goals(firstFrameP99MillisecondsBelow: Self.firstFrameGoalMilliseconds, firstFrameMet: firstFrameGoalMet,
                                   firstFrameToEspeakCommandP50Ratio: firstFrame.ratio), forKey: .goals)
    }

    // MARK: Tables

    func table() -> String {
        var lines: [String] = []
        lines.append("earshot-alerts \(AlertsContract.Manager.presentAlert.name) round-trips on a private bus (µs): each client its own connection, all calling at once")
        lines.append("alert: Text + Audio [(TEXT, \"\(alertText)\")], Priority \(priority); \(warmupCalls) warm-up calls first")
        let widths = [-9, 7, 7, 9, 9, 9, 9, 10, 10, 8, 8, 8]
        lines.append(row(["clients", "calls", "errors", "calls/s", "p50", "p99", "mean", "max", "accepted", "rate-l", "q-full", "other"],
                         widths: widths))
        for result in roundTrips {
            let other = result.outcomes.filter { !["accepted", "rate-limited", "queue-full"].contains($0.key) }.values.reduce(0, +)
            lines.append(row(["\(result.clients) x \(result.callsPerClient)", "\(result.calls)", "\(result.errors)",
                              fixed(result.callsPerSecond, 0), fixed(result.allMicroseconds.p50, 1), fixed(result.allMicroseconds.p99, 1),
                              fixed(result.allMicroseconds.mean, 1), fixed(result.allMicroseconds.max, 1), "\(result.accepted)",
                              "\(result.outcomes["rate-limited"] ?? 0)", "\(result.outcomes["queue-full"] ?? 0)", "\(other)"],
                             widths: widths))
        }
        let splitWidths = [-9, -10, 7, 9, 9, 9, 10]
        lines.append(row(["clients", "outcome", "calls", "p50", "p99", "mean", "max"], widths: splitWidths))
        for result in roundTrips {
            for (label, figures) in [("accepted", result.acceptedMicroseconds), ("rejected", result.rejectedMicroseconds)] {
                lines.append(row(["\(result.clients)", label, "\(figures.samples)", fixed(figures.p50, 1), fixed(figures.p99, 1),
                                  fixed(figures.mean, 1), fixed(figures.max, 1)], widths: splitWidths))
            }
        }
        lines.append("(calls/s: replies over the phase's wall time; accepted: queued or presented, by its first Completed; rate-l: REJECTED")
        lines.append(" rate-limited, q-full: REJECTED queue-full; other: capture-active or no Completed seen; the reply is the alert's")
        lines.append(" object path either way)")
        lines.append("")

        let f = firstFrame
        lines.append("Alert becoming current -> its first audio frame written to ALSA (ms), Speak [(TEXT, \"\(f.sentence)\")]")
        lines.append("\(f.runs) alerts one after another, each after the previous one's Completed (\(f.warmupRuns) warm-up not counted); "
                     + "ALSA file speaker, --output-pace \(f.outputPace), \(f.outputRate) Hz mono 16-bit")
        let ffWidths = [-44, 6, 9, 9, 9, 9, 9]
        lines.append(row(["", "runs", "p50", "p99", "max", "mean", "min"], widths: ffWidths))
        func figuresRow(_ label: String, _ figures: Figures) -> String {
            row([label, "\(figures.samples)", fixed(figures.p50, 1), fixed(figures.p99, 1), fixed(figures.max, 1), fixed(figures.mean, 1),
                 fixed(figures.min, 1)], widths: ffWidths)
        }
        lines.append(figuresRow("earshot-alerts: first frame (its log)", f.firstFrame))
        lines.append(figuresRow("espeak-ng -w out.wav \"...\" (wall, whole run)", f.espeak))
        lines.append(figuresRow("client: Speak round-trip", f.speakRoundTrip))
        lines.append(figuresRow("client: Speak call -> Completed", f.speakToCompleted))
        let codes = f.resultCodes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        lines.append("Completed: \(codes.isEmpty ? "none" : codes); audio written \(fixed(f.audioSecondsWritten, 2)) s "
                     + "(\(fixed(f.audioSecondsWritten / Double(max(1, f.runs)), 2)) s per alert)"
                     + (f.missingFirstFrame > 0 ? "; \(f.missingFirstFrame) alerts logged no first frame" : "")
                     + (f.espeakFailures > 0 ? "; \(f.espeakFailures) espeak-ng runs failed" : ""))
        lines.append("Ratio first frame p50 / espeak-ng command p50: \(fixed(f.ratio, 3)) "
                     + "(\(fixed(f.firstFrame.p50, 1)) ms / \(fixed(f.espeak.p50, 1)) ms)")
        lines.append("")
        lines.append("Goal: first audio frame < \(fixed(Self.firstFrameGoalMilliseconds, 0)) ms at p99 (\(fixed(f.firstFrame.p99, 1)) ms): "
                     + (firstFrameGoalMet ? "MET" : "NOT MET"))
        if let rss = serviceRssKiB, let hwm = serviceHwmKiB {
            lines.append("earshot-alerts at the end: VmRSS \(fixed(Double(rss) / 1024, 1)) MiB, VmHWM \(fixed(Double(hwm) / 1024, 1)) MiB")
        }
        #if DEBUG
        let build = "debug build: figures are not representative"
        #else
        let build = "release build"
        #endif
        lines.append("(\(processors) CPUs, \(build))")
        return lines.joined(separator: "\n")
    }

    private func row(_ cells: [String], widths: [Int]) -> String { TableFormat.row(cells, widths: widths) }
    private func fixed(_ value: Double, _ digits: Int) -> String { TableFormat.fixed(value, digits) }
}
