import EarshotContract
import Foundation

/// What `earshot-bench policy` measured, in milliseconds.
struct PolicyBenchmarkResults: BenchmarkReport, Sendable {
    static let goalMilliseconds = 50.0

    let processors: Int
    /// The PipeWire access rules: "head-unit" (the streams an application's) or "open".
    let access: String
    let rounds: Int
    let warmupRounds: Int
    let quantumSamples: Int
    let radioLevelDB: Double
    let alertPriority: String
    /// The Activate call itself: the session applies it and the daemon confirms before it replies.
    let activateRoundTrip: Figures
    /// From the Activate reply to the radio ducked at the speakers' monitor.
    let activateToDucked: Figures
    /// From the Deactivate reply to the radio back at its level.
    let deactivateToRestored: Figures
    /// From the PresentAlert reply to the radio lowered.
    let alertToLowered: Figures
    /// WirePlumber: a new stream's node seen, to the link it made from it.
    let peerNodeToLink: Figures
    /// pw-play started, to its link.
    let peerStartToLink: Figures
    /// The link, to the stream's first sound at the monitor (the graph's path).
    let peerLinkToSound: Figures
    /// The node seen, to its first sound: the peer's whole path, as the rows above it.
    let peerNodeToSound: Figures
    /// Phase 5: a stream started during a duck, its highest level in a window above the
    /// ducked level, in dB.
    let newcomerAboveDuck: Figures
    /// Phase 4: the output buffer earshot-alerts asked for.
    let tailBufferMs: UInt32
    /// The marker closing each prompt, and the monitor's window.
    let markerMilliseconds: Double
    let windowMilliseconds: Double
    /// How much of the marker the speakers played, per prompt: from its first window to its
    /// last, with what the recording dropped between them.
    let tailHeard: Figures
    /// How many windows carried the marker, per prompt, in ms (short also where the
    /// recording dropped samples).
    let tailWindows: Figures

    /// The marker heard whole in every round, to within a window at each end.
    var tailGoalMet: Bool { tailHeard.min >= markerMilliseconds - 2 * windowMilliseconds }

    var goalMet: Bool {
        [activateToDucked, deactivateToRestored, alertToLowered].allSatisfy { $0.p99 < Self.goalMilliseconds }
    }

    static let newcomerGoalDB = 1.0
    var newcomerGoalMet: Bool { newcomerAboveDuck.p99 <= Self.newcomerGoalDB }

    func table() -> String {
        let widths = [-44, 8, 8, 8, 8, 8, 8, 8]
        var lines: [String] = []
        let quantum = Double(quantumSamples) / 48
        let rules = access == "head-unit" ? "the head unit's access rules, the streams an application's" : "no access rules"
        lines.append("""
            earshot-session and earshot-alerts on PipeWire (null sink, \(rules)), \(processors) processors; \(rounds) rounds of each kind \
            after \(warmupRounds) warm-up rounds; monitor windows and graph quantum \(quantumSamples) samples \
            (\(TableFormat.fixed(quantum, 1)) ms); the radio at \(TableFormat.fixed(radioLevelDB, 1)) dB
            """)
        lines.append(TableFormat.row(["ms", "samples", "p50", "p99", "p99.9", "mean", "min", "max"], widths: widths))
        let rows: [(String, Figures)] = [
            ("Activate round trip (applied and confirmed)", activateRoundTrip),
            ("Activate reply → radio ducked", activateToDucked),
            ("Deactivate reply → radio restored", deactivateToRestored),
            ("\(AlertsContract.Manager.presentAlert.name) (\(alertPriority)) reply → radio lowered", alertToLowered),
            ("peer: new stream's node → WirePlumber's link", peerNodeToLink),
            ("peer: pw-play started → link", peerStartToLink),
            ("peer: link → first sound at the monitor", peerLinkToSound),
            ("peer: node → first sound at the monitor", peerNodeToSound),
        ]
        for (name, figures) in rows {
            lines.append(TableFormat.row([name, String(figures.samples), TableFormat.fixed(figures.p50, 1), TableFormat.fixed(figures.p99, 1),
                                          TableFormat.fixed(figures.p999, 1), TableFormat.fixed(figures.mean, 1), TableFormat.fixed(figures.min, 1),
                                          TableFormat.fixed(figures.max, 1)], widths: widths))
        }
        lines.append("""
            p99 against the peer's node → first sound: activate \(ratio(activateToDucked)), deactivate \(ratio(deactivateToRestored)), \
            alert \(ratio(alertToLowered))
            """)
        lines.append("goal: p99 under \(Int(Self.goalMilliseconds)) ms for Activate, Deactivate and the alert's start: \(goalMet ? "met" : "NOT met")")
        lines.append("""
            a stream started during a duck, its peak in a \(TableFormat.fixed(windowMilliseconds, 1)) ms window above the duck, \
            \(newcomerAboveDuck.samples) streams (dB): p50 \(TableFormat.fixed(newcomerAboveDuck.p50, 2)), \
            p99 \(TableFormat.fixed(newcomerAboveDuck.p99, 2)), max \(TableFormat.fixed(newcomerAboveDuck.max, 2))
            """)
        lines.append("goal: p99 at most \(TableFormat.fixed(Self.newcomerGoalDB, 1)) dB above the duck: \(newcomerGoalMet ? "met" : "NOT met")")
        lines.append("""
            prompt's last \(Int(markerMilliseconds)) ms (a marker) heard at the speakers on a \(tailBufferMs) ms output buffer, \
            \(tailHeard.samples) prompts, first window to last: min \(TableFormat.fixed(tailHeard.min, 1)), p50 \(TableFormat.fixed(tailHeard.p50, 1)), \
            max \(TableFormat.fixed(tailHeard.max, 1)) ms; missing at most \(TableFormat.fixed(max(0, markerMilliseconds - tailHeard.min), 1)) ms \
            (windows of \(TableFormat.fixed(windowMilliseconds, 1)) ms); windows with the marker: min \(TableFormat.fixed(tailWindows.min, 1)), \
            p50 \(TableFormat.fixed(tailWindows.p50, 1)) ms
            """)
        lines.append("goal: nothing missing (within a window at each end): \(tailGoalMet ? "met" : "NOT met")")
        return lines.joined(separator: "\n")
    }

    private func ratio(_ figures: Figures) -> String {
        peerNodeToSound.p99 > 0 ? TableFormat.fixed(figures.p99 / peerNodeToSound.p99, 2) : "n/a"
    }
}
