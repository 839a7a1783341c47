import EarshotContract
import Foundation

/// What one configuration's pass-thru delivered, and how late.
struct ChunkLatencyResult: Encodable, Sendable {
    let configuration: String
    let samplingRate: UInt32
    let channels: UInt32
    let chunkMs: UInt32
    /// Bytes of every full chunk: rate × ChunkMs / 1000 × channels × 2.
    let chunkBytes: Int
    let expectedChunks: Int
    let chunks: Int
    /// Sequence numbers missing from 0 up to the highest received (or the expected count).
    let gaps: Int
    let duplicates: Int
    /// Chunks that arrived after one with a higher sequence number.
    let outOfOrder: Int
    /// Chunks of the wrong size (every chunk but the last must be exactly `chunkBytes`).
    let wrongSize: Int
    /// Chunks whose bytes differ from the microphone input at their place (0 for a
    /// processed pass-thru, whose chunks are not compared).
    let wrongContent: Int
    let contentCompared: Bool
    let latency: LatencySummary
    let p50Milliseconds: Double
    let p99Milliseconds: Double
    let maxMilliseconds: Double
    let meanMilliseconds: Double
    /// Chunks that arrived more than 2 ms after their monotonicUs.
    let over2Milliseconds: Int
    let finished: FinishedSignal
    let expectedFrames: UInt64
    /// How busy the whole machine was (percent of all cores, this benchmark included)
    /// during the pass-thru.
    let hostBusyPercent: Double?

    init(configuration: CaptureConfiguration, seconds: Int, expectedChunks: Int, chunks received: [CaptureBenchmark.ReceivedChunk],
         content: [UInt8], finished: FinishedSignal, hostBusyPercent: Double?) {
        self.hostBusyPercent = hostBusyPercent
        self.configuration = configuration.description
        samplingRate = configuration.samplingRate
        channels = configuration.channels
        chunkMs = configuration.chunkMs
        chunkBytes = configuration.chunkBytes
        self.expectedChunks = expectedChunks
        chunks = received.count
        self.finished = finished
        expectedFrames = UInt64(seconds) * UInt64(configuration.samplingRate)

        var seen = Set<UInt64>()
        var duplicates = 0, outOfOrder = 0
        var highestSoFar: UInt64?
        for chunk in received {
            if !seen.insert(chunk.sequence).inserted { duplicates += 1 }
            if let highest = highestSoFar, chunk.sequence < highest { outOfOrder += 1 }
            highestSoFar = max(highestSoFar ?? 0, chunk.sequence)
        }
        let span = max(expectedChunks, highestSoFar.map { Int($0) + 1 } ?? 0)
        gaps = span - seen.count
        self.duplicates = duplicates
        self.outOfOrder = outOfOrder

        var wrongSize = 0, wrongContent = 0
        for chunk in received {
            let isLast = chunk.sequence == highestSoFar
            if isLast ? !(1...configuration.chunkBytes).contains(chunk.data.count) : chunk.data.count != configuration.chunkBytes {
                wrongSize += 1
            }
            let offset = Int(chunk.sequence) * configuration.chunkBytes
            if !configuration.processed, offset + chunk.data.count > content.count || !content[offset..<(offset + chunk.data.count)].elementsEqual(chunk.data) {
                wrongContent += 1
            }
        }
        self.wrongSize = wrongSize
        self.wrongContent = wrongContent
        contentCompared = !configuration.processed

        let microseconds = received.map(\.latencyUs)
        latency = LatencySummary(microseconds.map { $0 * 1000 })
        p50Milliseconds = latency.p50Microseconds / 1000
        p99Milliseconds = latency.p99Microseconds / 1000
        maxMilliseconds = latency.maxMicroseconds / 1000
        meanMilliseconds = microseconds.isEmpty ? .nan : Double(microseconds.reduce(0, +)) / Double(microseconds.count) / 1000
        over2Milliseconds = microseconds.count { $0 > 2000 }
    }

    /// No chunk missing, doubled, reordered, mis-sized or corrupted, and the pass-thru ran
    /// to its MaxDuration.
    var intact: Bool {
        gaps == 0 && duplicates == 0 && outOfOrder == 0 && wrongSize == 0 && wrongContent == 0
            && chunks == expectedChunks && finished.framesCaptured == expectedFrames
            && finished.resultCode == "SUCCESS" && finished.reason == "timeout"
    }
}

/// CPU and memory of the service, arecord and the C capture loop over one pass-thru.
struct CPUComparison: Encodable, Sendable {
    static let captureLoopRole = "C capture loop"

    let configuration: String
    let chunkMs: UInt32
    let usage: [ProcessUsage]
    let recorder: PacedRecorder.Statistics?
    /// Which of the benchmark's runs (1 when it made one).
    let run: Int

    var service: ProcessUsage? { usage.first { $0.role == "earshot-capture" } }
    var arecord: ProcessUsage? { usage.first { $0.role == "arecord" } }
    /// arecord with periods as long as the chunks: it wakes as often as the service.
    var matchedArecord: ProcessUsage? { usage.first { $0.role == Self.matchedArecordRole(chunkMs) } }
    static func matchedArecordRole(_ chunkMs: UInt32) -> String { "arecord \(chunkMs) ms" }

    /// earshot-capture's CPU over that of arecord waking as often (CPU clock).
    var ratioToMatchedArecord: Double? {
        guard let s = service?.cpuMillisecondsFromClock, let a = matchedArecord?.cpuMillisecondsFromClock, a > 0 else { return nil }
        return s / a
    }
    /// CPU per run of the service's busiest thread (the one reading the device) over that
    /// of arecord waking as often: the cost of one wake-up, without the service's other
    /// threads and without the count of wake-ups.
    var serviceToMatchedArecordPerRun: Double? {
        guard let s = service?.busiestThread?.microsecondsPerRun, let a = matchedArecord?.busiestThread?.microsecondsPerRun, a > 0 else { return nil }
        return s / a
    }

    /// The C reference doing the service's least work per chunk: read, one libdbus signal.
    var captureLoop: ProcessUsage? { usage.first { $0.role == Self.captureLoopRole } }

    /// earshot-capture's CPU over the C capture loop's (CPU clock): what Swift and the
    /// service add to the same work.
    var ratioToCaptureLoop: Double? {
        guard let s = service?.cpuMillisecondsFromClock, let c = captureLoop?.cpuMillisecondsFromClock, c > 0 else { return nil }
        return s / c
    }

    /// The C capture loop's CPU over arecord's: what one D-Bus signal per chunk costs
    /// without any service around it.
    var captureLoopToArecord: Double? {
        guard let c = captureLoop?.cpuMillisecondsFromClock, let a = arecord?.cpuMillisecondsFromClock, a > 0 else { return nil }
        return c / a
    }

    var ratioFromTicks: Double? {
        guard let service, let arecord, arecord.ticks > 0 else { return nil }
        return Double(service.ticks) / Double(arecord.ticks)
    }

    var ratioFromClock: Double? {
        guard let s = service?.cpuMillisecondsFromClock, let a = arecord?.cpuMillisecondsFromClock, a > 0 else { return nil }
        return s / a
    }

    /// Judged on the CPU clock (nanoseconds) when it could be read, else on the ticks.
    var ratio: Double? { ratioFromClock ?? ratioFromTicks }
    var goalMet: Bool? { ratio.map { $0 <= CaptureBenchmarkResults.cpuRatioGoal } }
    /// Whether the audio went as signals (not `Delivery` `stream`): those are also judged
    /// against the C capture loop, which sends the same signals.
    var sendsSignals: Bool { !configuration.contains("stream") }
    var loopGoalMet: Bool? {
        guard sendsSignals else { return nil }
        return ratioToCaptureLoop.map { $0 <= CaptureBenchmarkResults.captureLoopRatioGoal }
    }

    private enum CodingKeys: String, CodingKey {
        case configuration, chunkMs, usage, recorder, run, ratioFromTicks, ratioFromClock, goalMet, ratioToCaptureLoop, captureLoopToArecord,
             ratioToMatchedArecord, serviceToMatchedArecordPerRun, loopGoalMet
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(configuration, forKey: .configuration)
        try container.encode(chunkMs, forKey: .chunkMs)
        try container.encode(usage, forKey: .usage)
        try container.encodeIfPresent(recorder, forKey: .recorder)
        try container.encode(run, forKey: .run)
        try container.encodeIfPresent(ratioFromTicks, forKey: .ratioFromTicks)
        try container.encodeIfPresent(ratioFromClock, forKey: .ratioFromClock)
        try container.encodeIfPresent(goalMet, forKey: .goalMet)
        try container.encodeIfPresent(ratioToCaptureLoop, forKey: .ratioToCaptureLoop)
        try container.encodeIfPresent(captureLoopToArecord, forKey: .captureLoopToArecord)
        try container.encodeIfPresent(ratioToMatchedArecord, forKey: .ratioToMatchedArecord)
        try container.encodeIfPresent(serviceToMatchedArecordPerRun, forKey: .serviceToMatchedArecordPerRun)
        try container.encodeIfPresent(loopGoalMet, forKey: .loopGoalMet)
    }

    func table(fixed: (Double, Int) -> String, row: ([String], [Int]) -> String) -> [String] {
        guard let service, arecord != nil else { return [] }
        var lines: [String] = []
        lines.append("CPU and memory while capturing \(configuration), arecord and the C capture loop alongside")
        lines.append("same window for every process: \(fixed(service.windowSeconds, 2)) s, from the first chunk to about 0.5 s before the last")
        let widths = [-17, 8, 7, 15, 16, 15, 11, 11]
        lines.append(row(["process", "pid", "ticks", "cpu % (ticks)", "cpu ms (clock)", "cpu % (clock)", "VmRSS MiB", "VmHWM MiB"], widths))
        for usage in usage {
            let name = usage.role == "dbus-daemon" ? "dbus-daemon*" : usage.role
            lines.append(row([name, "\(usage.pid)", "\(usage.ticks)", fixed(usage.cpuPercentFromTicks, 3),
                              usage.cpuMillisecondsFromClock.map { fixed($0, 1) } ?? "-",
                              usage.cpuPercentFromClock.map { fixed($0, 3) } ?? "-",
                              fixed(Double(usage.rssKiBAtEnd) / 1024, 1), fixed(Double(usage.hwmKiBAtEnd) / 1024, 1)], widths))
        }
        lines.append("(cpu %: of one core; ticks: utime+stime from /proc/PID/stat at \(service.clockTicksPerSecond)/s; clock: the process CPU clock,")
        lines.append(" clock_getcpuclockid, in ns; VmRSS/VmHWM from /proc/PID/status at the window's end; *dbus-daemon routes the")
        lines.append(" chunks, shown for information, not in the ratio)")
        lines.append("CPU ratio earshot-capture / arecord: \(ratioFromTicks.map { fixed($0, 2) } ?? "- (arecord used < 1 tick)") from ticks, "
                     + "\(ratioFromClock.map { fixed($0, 2) } ?? "-") from the CPU clock")
        if let toMatched = ratioToMatchedArecord {
            lines.append("CPU ratio earshot-capture / arecord with \(chunkMs) ms periods (waking once per chunk, as the service does): "
                         + "\(fixed(toMatched, 2)) (CPU clock; arecord's own default period is 125 ms)")
        }
        if let toLoop = ratioToCaptureLoop, let loopToArecord = captureLoopToArecord {
            lines.append("CPU ratio earshot-capture / C capture loop (the same read and one libdbus signal per chunk, in C): "
                         + "\(fixed(toLoop, 2)); C capture loop / arecord: \(fixed(loopToArecord, 2)) (CPU clock)")
        }
        let perRun = usage.filter { $0.role != "dbus-daemon" }.compactMap { usage -> String? in
            guard let busiest = usage.busiestThread, let each = busiest.microsecondsPerRun else { return nil }
            let others = usage.threads.count > 1 ? " + \(fixed(usage.otherThreadsMilliseconds, 2)) ms in \(usage.threads.count - 1) other threads" : ""
            return "\(usage.role): \(busiest.runs) x \(fixed(each, 1)) us\(others)"
        }
        if !perRun.isEmpty {
            lines.append("busiest thread's runs on a CPU (about one per wake-up) x CPU per run, from /proc/PID/task/TID/schedstat:")
            lines.append("  " + perRun.joined(separator: "; "))
        }
        // (With signals, a wake-up of the service also sends one: not arecord's work.)
        if !sendsSignals, let perWake = serviceToMatchedArecordPerRun {
            lines.append("CPU per run, earshot-capture's busiest thread / arecord with \(chunkMs) ms periods: \(fixed(perWake, 2))")
        }
        if let recorder {
            let rate = recorder.seconds > 0 ? Double(recorder.bytesRead) / recorder.seconds : 0
            lines.append("arecord pacing: \(recorder.bytesRead) bytes read from its pipe in \(fixed(recorder.seconds, 1)) s (\(fixed(rate, 0)) B/s), "
                         + "\(recorder.lateTicks) of \(recorder.ticks) 10 ms ticks waited for arecord"
                         + (recorder.exitStatus.map { ", arecord's exit status when stopped \($0)" } ?? ""))
        }
        lines.append("")
        return lines
    }
}

struct CaptureBenchmarkResults: BenchmarkReport, Sendable {
    static let latencyGoalMilliseconds = 2.0
    static let cpuRatioGoal = 1.5
    /// Signals: CPU within this of the C capture loop's, which sends the same signals.
    static let captureLoopRatioGoal = 1.2

    let seconds: Int
    let processors: Int
    /// `live` or `pipewire` (`CaptureBenchmark.MicrophoneKind`).
    let microphone: String
    let runs: Int
    let latencies: [ChunkLatencyResult]
    let cpu: [CPUComparison]

    /// A CPU ratio of one configuration over the runs.
    struct Distribution: Encodable, Sendable {
        let configuration: String
        let ratio: String
        let values: [Double]
        var min: Double { values.min() ?? .nan }
        var max: Double { values.max() ?? .nan }
        /// The middle value, or the mean of the two middle ones.
        var median: Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return .nan }
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }
        var p25: Double { nearestRank(values.sorted(), 0.25) ?? .nan }
        var p75: Double { nearestRank(values.sorted(), 0.75) ?? .nan }

        private enum CodingKeys: String, CodingKey { case configuration, ratio, values, min, p25, median, p75, max }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(configuration, forKey: .configuration)
            try container.encode(ratio, forKey: .ratio)
            try container.encode(values, forKey: .values)
            for (key, value) in [(CodingKeys.min, min), (.p25, p25), (.median, median), (.p75, p75), (.max, max)] {
                try container.encode(value, forKey: key)
            }
        }
    }

    /// Each configuration's ratios over the runs, in the order first measured.
    var distributions: [Distribution] {
        var order: [String] = []
        for comparison in cpu where !order.contains(comparison.configuration) { order.append(comparison.configuration) }
        return order.flatMap { configuration -> [Distribution] in
            let runs = cpu.filter { $0.configuration == configuration }
            let ratios: [(String, [Double])] = [
                ("earshot-capture / arecord", runs.compactMap(\.ratio)),
                ("earshot-capture / arecord with chunk-long periods", runs.compactMap(\.ratioToMatchedArecord)),
                ("earshot-capture / C capture loop", runs.compactMap(\.ratioToCaptureLoop)),
            ]
            return ratios.filter { !$0.1.isEmpty }.map { Distribution(configuration: configuration, ratio: $0.0, values: $0.1) }
        }
    }

    /// The configurations the p99 goal is judged on: those without speech processing (what
    /// processing adds is judged on its own).
    var unprocessedLatencies: [ChunkLatencyResult] { latencies.filter(\.contentCompared) }
    var latencyGoalMet: Bool { unprocessedLatencies.allSatisfy { $0.p99Milliseconds < Self.latencyGoalMilliseconds } }

    /// What speech processing adds to the p99 of the same pass-thru without it (ms), per
    /// run measured; the goal: less than `latencyGoalMilliseconds`.
    var processingAddedMilliseconds: [Double] {
        let processed = latencies.filter { $0.configuration.hasPrefix("(p)") }
        let unprocessed = latencies.filter { $0.configuration.hasPrefix("(\(CaptureConfiguration.unprocessedPeer))") }
        return zip(processed, unprocessed).map { $0.p99Milliseconds - $1.p99Milliseconds }
    }
    var gapGoalMet: Bool { latencies.allSatisfy { $0.gaps == 0 } }

    private enum CodingKeys: String, CodingKey {
        case seconds, processors, microphone, runs, latencies, cpu, distributions, goals, processingAddedMilliseconds
    }

    private struct Goals: Encodable {
        let p99MillisecondsBelow: Double
        /// Absent when no configuration was measured for latency (`--only-cpu` with `s` alone).
        let p99Met: Bool?
        let zeroGapsMet: Bool?
        let cpuRatioMax: Double
        let captureLoopRatioMax: Double
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(seconds, forKey: .seconds)
        try container.encode(processors, forKey: .processors)
        try container.encode(microphone, forKey: .microphone)
        try container.encode(runs, forKey: .runs)
        if runs > 1 { try container.encode(distributions, forKey: .distributions) }
        try container.encode(latencies, forKey: .latencies)
        try container.encode(processingAddedMilliseconds, forKey: .processingAddedMilliseconds)
        try container.encode(cpu, forKey: .cpu)
        let measured = !latencies.isEmpty
        try container.encode(Goals(p99MillisecondsBelow: Self.latencyGoalMilliseconds,
                                   p99Met: measured ? latencyGoalMet : nil, zeroGapsMet: measured ? gapGoalMet : nil,
                                   cpuRatioMax: Self.cpuRatioGoal, captureLoopRatioMax: Self.captureLoopRatioGoal), forKey: .goals)
    }

    // MARK: Tables

    func table() -> String {
        var lines: [String] = []
        if !latencies.isEmpty { lines += latencyTable() }
        for comparison in cpu {
            if runs > 1 { lines.append("run \(comparison.run) of \(runs)") }
            lines += comparison.table(fixed: fixed, row: row)
        }
        if runs > 1 {
            lines.append("CPU ratios over \(runs) runs (CPU clock): min p25 median p75 max")
            for distribution in distributions {
                lines.append("  \(distribution.configuration.prefix(3)) \(distribution.ratio): "
                             + [distribution.min, distribution.p25, distribution.median, distribution.p75, distribution.max]
                                .map { fixed($0, 2) }.joined(separator: " ")
                             + "  (" + distribution.values.map { fixed($0, 2) }.joined(separator: ", ") + ")")
            }
            lines.append("")
        }

        let worst = unprocessedLatencies.max { $0.p99Milliseconds < $1.p99Milliseconds }
        let worstText = worst.map { "worst \(fixed($0.p99Milliseconds, 3)) ms at (\($0.configuration.dropFirst().prefix(1)))" } ?? "no data"
        let gaps = latencies.map(\.gaps).reduce(0, +)
        var goals = latencies.isEmpty ? "Goals: latency and gaps not measured (--only-cpu without signals)"
            : "Goals: p99 < \(fixed(Self.latencyGoalMilliseconds, 0)) ms in every configuration without processing (\(worstText)): \(latencyGoalMet ? "MET" : "NOT MET"); "
            + "zero gaps (\(gaps)): \(gapGoalMet ? "MET" : "NOT MET")"
        let judged = cpu.compactMap { comparison -> String? in
            guard let ratio = comparison.ratio, let met = comparison.goalMet else { return nil }
            return "\(comparison.configuration.prefix(3)) \(comparison.chunkMs) ms chunks\(comparison.configuration.contains("stream") ? ", stream" : "") \(fixed(ratio, 2))\(comparison.ratioFromClock != nil ? "" : " (ticks)") \(met ? "MET" : "NOT MET")"
        }
        if runs > 1 {
            let medians = distributions.filter { $0.ratio == "earshot-capture / arecord" }.map { distribution in
                "\(distribution.configuration.prefix(3)) median \(fixed(distribution.median, 2)) "
                    + (distribution.median <= Self.cpuRatioGoal ? "MET" : "NOT MET")
            }
            goals += "; CPU <= \(fixed(Self.cpuRatioGoal, 1))x arecord over \(runs) runs (CPU clock): " + medians.joined(separator: ", ")
        } else if !judged.isEmpty {
            goals += "; CPU <= \(fixed(Self.cpuRatioGoal, 1))x arecord (CPU clock): " + judged.joined(separator: ", ")
        }
        let judgedAgainstLoop = cpu.compactMap { comparison -> String? in
            guard let ratio = comparison.ratioToCaptureLoop, let met = comparison.loopGoalMet else { return nil }
            return "\(comparison.configuration.prefix(3)) \(comparison.chunkMs) ms chunks \(fixed(ratio, 2)) \(met ? "MET" : "NOT MET")"
        }
        if !judgedAgainstLoop.isEmpty {
            goals += "; signals CPU <= \(fixed(Self.captureLoopRatioGoal, 1))x the C capture loop (CPU clock): " + judgedAgainstLoop.joined(separator: ", ")
        }
        let added = processingAddedMilliseconds
        if !added.isEmpty {
            goals += "; \(CaptureContract.Manager.Keys.noiseSuppression.name) high adds < \(fixed(Self.latencyGoalMilliseconds, 0)) ms to the p99 of (\(CaptureConfiguration.unprocessedPeer)) ("
                + added.map { fixed($0, 3) }.joined(separator: ", ") + " ms): "
                + (added.allSatisfy { $0 < Self.latencyGoalMilliseconds } ? "MET" : "NOT MET")
        }
        lines.append(goals)
        let broken = latencies.filter { !$0.intact }
        if !broken.isEmpty {
            lines.append("NOT INTACT: " + broken.map { "\($0.configuration) (Finished \($0.finished.resultCode)/\($0.finished.reason), \($0.finished.framesCaptured) frames)" }.joined(separator: "; "))
        }
        #if DEBUG
        let build = "debug build: figures are not representative"
        #else
        let build = "release build"
        #endif
        let source = microphone == "pipewire" ? "ALSA's pipewire PCM from a PipeWire virtual source" : "live microphones (FIFOs filled in real time)"
        lines.append("(\(processors) CPUs, \(seconds) s per configuration, \(source), \(build))")
        return lines.joined(separator: "\n")
    }

    /// The latency table, one row per configuration measured with signals.
    private func latencyTable() -> [String] {
        var lines: [String] = []
        lines.append("earshot-capture chunk latency: arrival at a Swift client minus the chunk's monotonicUs (ms)")
        lines.append("one \(seconds) s pass-thru per configuration, live microphone (a FIFO filled in real time), private bus")
        let widths = [-38, 7, 9, 6, 7, 7, 8, 8, 8, 8, 7, 7, 3, -18]
        lines.append(row(["configuration", "chunks", "expected", "gaps", "size!", "data!", "p50", "p99", "max", "mean", ">2 ms", "host%",
                          "", CaptureContract.PassThru.finished.name], widths))
        for result in latencies {
            let finished = "\(result.finished.resultCode) (\(result.finished.reason))"
            lines.append(row([result.configuration, "\(result.chunks)", "\(result.expectedChunks)", "\(result.gaps)",
                              "\(result.wrongSize)", result.contentCompared ? "\(result.wrongContent)" : "-",
                              fixed(result.p50Milliseconds, 3), fixed(result.p99Milliseconds, 3), fixed(result.maxMilliseconds, 3),
                              fixed(result.meanMilliseconds, 3), "\(result.over2Milliseconds)",
                              result.hostBusyPercent.map { fixed($0, 1) } ?? "-", "", finished], widths))
        }
        lines.append("(size!: chunks not exactly rate x \(CaptureContract.Manager.Keys.chunkMs.name)/1000 x channels x 2 bytes, the last excepted; data!: chunks whose bytes")
        lines.append(" differ from the microphone input at their place; host%: the whole machine's CPU use, all cores, this benchmark")
        lines.append(" included" + latencies.compactMap { result in
            var notes: [String] = []
            if result.duplicates > 0 { notes.append("\(result.duplicates) duplicates") }
            if result.outOfOrder > 0 { notes.append("\(result.outOfOrder) out of order") }
            if result.finished.framesCaptured != result.expectedFrames {
                notes.append("\(CaptureContract.PassThru.FinishedKeys.framesCaptured.name) \(result.finished.framesCaptured), expected \(result.expectedFrames)")
            }
            return notes.isEmpty ? nil : "; (\(result.samplingRate / 1000) kHz, \(result.chunkMs) ms): " + notes.joined(separator: ", ")
        }.joined() + ")")
        lines.append("")
        return lines
    }

    private func row(_ cells: [String], _ widths: [Int]) -> String { TableFormat.row(cells, widths: widths) }
    private func fixed(_ value: Double, _ digits: Int) -> String { TableFormat.fixed(value, digits) }
}
