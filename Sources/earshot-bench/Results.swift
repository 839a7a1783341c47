import Foundation

/// Latency percentiles of one client, in microseconds.
struct LatencySummary: Encodable {
    let samples: Int
    let p50Microseconds: Double
    let p99Microseconds: Double
    let minMicroseconds: Double
    let maxMicroseconds: Double

    init(_ nanoseconds: [UInt64]) {
        let sorted = nanoseconds.sorted()
        samples = sorted.count
        func us(_ ns: UInt64) -> Double { Double(ns) / 1000 }
        p50Microseconds = nearestRank(sorted, 0.50).map(us) ?? .nan
        p99Microseconds = nearestRank(sorted, 0.99).map(us) ?? .nan
        minMicroseconds = sorted.first.map(us) ?? .nan
        maxMicroseconds = sorted.last.map(us) ?? .nan
    }
}

struct RoundTripResult: Encodable {
    let payload: String
    let bytes: Int
    /// Calls awaited from a task on the cooperative pool, as every call through EarshotClient
    /// is by default (the caller's thread waits for the reply itself, for up to 2 ms): the
    /// figure the goal is judged on.
    let defaultPath: LatencySummary
    /// The same calls on a connection whose callers never wait on their own thread (opened
    /// with `callerWait: .zero`): the reply read by the I/O thread wakes the suspended task,
    /// the default until 2026-12-01.
    let taskWait: LatencySummary
    /// The same calls run on the connection's I/O thread (its task executor, opted into with
    /// `withTaskExecutorPreference`).
    let ioThread: LatencySummary
    let c: LatencySummary
    /// The benchmark process's CPU time per call (every thread: for the Swift calls the
    /// caller, the I/O thread and the pool; for C the calling thread), in µs.
    let cpuMicrosecondsPerCall: ClientCPU

    struct ClientCPU: Encodable {
        let defaultPath: Double
        let taskWait: Double
        let ioThread: Double
        let c: Double
    }

    var p50Ratio: Double { defaultPath.p50Microseconds / c.p50Microseconds }
    var taskWaitP50Ratio: Double { taskWait.p50Microseconds / c.p50Microseconds }
    var ioThreadP50Ratio: Double { ioThread.p50Microseconds / c.p50Microseconds }
}

/// Signal throughput of one client over all its rounds.
struct ThroughputSummary: Encodable {
    let rounds: Int
    let signalsPerRound: Int
    /// Each round's duration, in milliseconds.
    let roundMilliseconds: [Double]
    /// All signals over all rounds' time.
    let signalsPerSecond: Double
    let megabytesPerSecond: Double
    /// The fastest round's rate.
    let bestSignalsPerSecond: Double

    init(count: Int, bytes: Int, rounds durations: [UInt64]) {
        rounds = durations.count
        signalsPerRound = count
        roundMilliseconds = durations.map { Double($0) / 1e6 }
        let total = Double(durations.reduce(0, +)) / 1e9
        signalsPerSecond = Double(count * durations.count) / total
        megabytesPerSecond = signalsPerSecond * Double(bytes) / 1e6
        bestSignalsPerSecond = Double(count) / (Double(durations.min() ?? 0) / 1e9)
    }
}

struct SignalResult: Encodable {
    let count: Int
    let bytes: Int
    let swift: ThroughputSummary
    let c: ThroughputSummary

    var ratio: Double { swift.signalsPerSecond / c.signalsPerSecond }
}

struct BenchmarkResults: BenchmarkReport {
    static let roundTripGoal = 1.10
    /// The payloads the round-trip goal is judged at: the small calls, where the binding's
    /// own cost shows (at 64 KiB and 1 MiB copying the bytes dominates both clients).
    static let judgedPayloads: Set<Int> = [16, 3200]
    static let signalGoal = 0.8

    let libdbusVersion: String
    let processors: Int
    let iterationsScale: Double
    /// GLIBC_TUNABLES as this run had it (the clients'; the echo server gets the services'
    /// settings from the harness, `AllocatorTunables`): at 1 MiB the allocator's trimming
    /// and refaulting is much of every client's time.
    let mallocTunables: String?
    /// A typed EarshotClient call and the same call from C: the default path as applications
    /// have it, judged by the same goal.
    let clientCall: ClientCallResult
    let roundTrips: [RoundTripResult]
    let signals: SignalResult

    var judgedRoundTrips: [RoundTripResult] { roundTrips.filter { Self.judgedPayloads.contains($0.bytes) } }
    var worstRoundTrip: RoundTripResult? { judgedRoundTrips.max { $0.p50Ratio < $1.p50Ratio } }
    var worstIOThreadRoundTrip: RoundTripResult? { judgedRoundTrips.max { $0.ioThreadP50Ratio < $1.ioThreadP50Ratio } }
    var roundTripGoalMet: Bool { !judgedRoundTrips.isEmpty && judgedRoundTrips.allSatisfy { $0.p50Ratio <= Self.roundTripGoal } }
    var clientCallGoalMet: Bool { clientCall.p50Ratio <= Self.roundTripGoal }
    var signalGoalMet: Bool { signals.ratio >= Self.signalGoal }

    private enum CodingKeys: String, CodingKey {
        case libdbusVersion, processors, iterationsScale, mallocTunables, clientCall, roundTrips, signals, goals
    }

    private struct Goals: Encodable {
        let clientCallP50Ratio: Double
        let clientCallMet: Bool
        let roundTripP50RatioMax: Double
        let roundTripJudgedAt: [String]
        let roundTripP50Ratios: [String: Double]
        let roundTripMet: Bool
        let taskWaitP50Ratios: [String: Double]
        let ioThreadP50Ratios: [String: Double]
        let signalThroughputRatioMin: Double
        let signalThroughputRatio: Double
        let signalMet: Bool
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(libdbusVersion, forKey: .libdbusVersion)
        try container.encode(processors, forKey: .processors)
        try container.encode(iterationsScale, forKey: .iterationsScale)
        try container.encode(mallocTunables, forKey: .mallocTunables)
        try container.encode(clientCall, forKey: .clientCall)
        try container.encode(roundTrips, forKey: .roundTrips)
        try container.encode(signals, forKey: .signals)
        try container.encode(Goals(
            clientCallP50Ratio: clientCall.p50Ratio,
            clientCallMet: clientCallGoalMet,
            roundTripP50RatioMax: Self.roundTripGoal,
            roundTripJudgedAt: judgedRoundTrips.map(\.payload),
            roundTripP50Ratios: Dictionary(uniqueKeysWithValues: roundTrips.map { ($0.payload, $0.p50Ratio) }),
            roundTripMet: roundTripGoalMet,
            taskWaitP50Ratios: Dictionary(uniqueKeysWithValues: roundTrips.map { ($0.payload, $0.taskWaitP50Ratio) }),
            ioThreadP50Ratios: Dictionary(uniqueKeysWithValues: roundTrips.map { ($0.payload, $0.ioThreadP50Ratio) }),
            signalThroughputRatioMin: Self.signalGoal,
            signalThroughputRatio: signals.ratio,
            signalMet: signalGoalMet), forKey: .goals)
    }

    // MARK: Tables

    func table() -> String {
        var lines: [String] = []
        lines.append("EarshotClient call against the same call from C, on a real service (p50 / p99 µs; CPU µs per call)")
        let clientWidths = [-42, 11, 11, 9, 9, 13, 11, 8]
        lines.append(row(["call", "client p50", "client p99", "C p50", "C p99", "p50 client/C", "client CPU", "C CPU"], widths: clientWidths))
        lines.append(row([clientCall.call, fixed(clientCall.client.p50Microseconds, 1), fixed(clientCall.client.p99Microseconds, 1),
                          fixed(clientCall.c.p50Microseconds, 1), fixed(clientCall.c.p99Microseconds, 1), fixed(clientCall.p50Ratio, 2),
                          fixed(clientCall.clientCPUMicroseconds, 1), fixed(clientCall.cCPUMicroseconds, 1)], widths: clientWidths))
        lines.append("(samples per client: \(clientCall.client.samples))")
        lines.append("")
        lines.append("D-Bus round-trips through the binding, EchoBytes on a private bus (p50 / p99 µs); default: calls awaited from a task on the "
                     + "cooperative pool (every EarshotClient call: the caller's thread waits for the reply, up to 2 ms); "
                     + "task: the same with the task suspended until the I/O thread reads the reply (callerWait: .zero); "
                     + "I/O thread: the same calls on the connection's I/O thread (withTaskExecutorPreference)")
        let widths = [-8, 12, 12, 9, 9, 9, 9, 9, 9, 16, 8, 13]
        lines.append(row(["payload", "default p50", "default p99", "task p50", "task p99", "I/O p50", "I/O p99", "C p50", "C p99",
                          "p50 default/C", "task/C", "I/O thread/C"], widths: widths))
        for result in roundTrips {
            lines.append(row([result.payload, fixed(result.defaultPath.p50Microseconds, 1), fixed(result.defaultPath.p99Microseconds, 1),
                              fixed(result.taskWait.p50Microseconds, 1), fixed(result.taskWait.p99Microseconds, 1),
                              fixed(result.ioThread.p50Microseconds, 1), fixed(result.ioThread.p99Microseconds, 1),
                              fixed(result.c.p50Microseconds, 1), fixed(result.c.p99Microseconds, 1), fixed(result.p50Ratio, 2),
                              fixed(result.taskWaitP50Ratio, 2), fixed(result.ioThreadP50Ratio, 2)], widths: widths))
        }
        let samples = roundTrips.map { "\($0.payload) \($0.defaultPath.samples)" }.joined(separator: ", ")
        lines.append("(samples per client: \(samples))")
        lines.append("")
        lines.append("Client CPU per round-trip (µs; this process's CPU time, all threads, while each client made its calls)")
        let cpuWidths = [-8, 11, 11, 11, 11, 13]
        lines.append(row(["payload", "default", "task", "I/O thread", "C", "default/C"], widths: cpuWidths))
        for result in roundTrips {
            let cpu = result.cpuMicrosecondsPerCall
            lines.append(row([result.payload, fixed(cpu.defaultPath, 1), fixed(cpu.taskWait, 1), fixed(cpu.ioThread, 1), fixed(cpu.c, 1),
                              fixed(cpu.defaultPath / cpu.c, 2)], widths: cpuWidths))
        }
        lines.append("")
        lines.append("Unicast signals, \(sizeLabel(signals.bytes)) each (\(signals.swift.rounds) rounds × \(signals.count) per client)")
        lines.append(row(["", "swift sig/s", "C sig/s", "ratio swift/C"], widths: [-8, 13, 13, 15]))
        lines.append(row(["signals", fixed(signals.swift.signalsPerSecond, 0), fixed(signals.c.signalsPerSecond, 0),
                          fixed(signals.ratio, 2)], widths: [-8, 13, 13, 15]))
        lines.append(row(["MB/s", fixed(signals.swift.megabytesPerSecond, 1), fixed(signals.c.megabytesPerSecond, 1), ""],
                         widths: [-8, 13, 13, 15]))
        lines.append(row(["best", fixed(signals.swift.bestSignalsPerSecond, 0), fixed(signals.c.bestSignalsPerSecond, 0),
                          fixed(signals.swift.bestSignalsPerSecond / signals.c.bestSignalsPerSecond, 2)],
                         widths: [-8, 13, 13, 15]))
        lines.append("")
        // Three decimals where two would round a miss onto the limit (1.104 is not ≤ 1.10).
        let worst = worstRoundTrip.map { "worst \(fixed($0.p50Ratio, 3)) at \($0.payload)" } ?? "no data"
        let judged = judgedRoundTrips.map(\.payload).joined(separator: " and ")
        let ioWorst = worstIOThreadRoundTrip.map { "on the I/O thread: worst \(fixed($0.ioThreadP50Ratio, 3)) at \($0.payload)" } ?? ""
        lines.append("Goals: client call p50 ratio client/C ≤ \(fixed(Self.roundTripGoal, 2)) (\(fixed(clientCall.p50Ratio, 3))): "
                     + "\(clientCallGoalMet ? "MET" : "NOT MET"); "
                     + "binding round-trip p50 ratio default/C ≤ \(fixed(Self.roundTripGoal, 2)) at \(judged) (\(worst); \(ioWorst)): "
                     + "\(roundTripGoalMet ? "MET" : "NOT MET"); "
                     + "signal throughput ratio ≥ \(fixed(Self.signalGoal, 2)) (\(fixed(signals.ratio, 3))): \(signalGoalMet ? "MET" : "NOT MET")")
        lines.append("(libdbus \(libdbusVersion), \(processors) CPUs, iterations scale \(iterationsScale), "
                     + "GLIBC_TUNABLES \(mallocTunables.map { "'\($0)'" } ?? "unset (glibc's malloc defaults)"))")
        return lines.joined(separator: "\n")
    }

    private func row(_ cells: [String], widths: [Int]) -> String { TableFormat.row(cells, widths: widths) }
    private func fixed(_ value: Double, _ digits: Int) -> String { TableFormat.fixed(value, digits) }

    private func sizeLabel(_ bytes: Int) -> String {
        switch bytes {
        case 1 << 20: "1 MiB"
        case 65536: "64 KiB"
        case 3200: "3.2 KB"
        default: "\(bytes) B"
        }
    }
}
