import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc

/// CPU and memory of one process over a measurement window.
struct ProcessUsage: Encodable, Sendable {
    let role: String
    let command: String
    let pid: Int32
    let windowSeconds: Double
    let clockTicksPerSecond: UInt64
    let ticks: UInt64
    /// CPU time / wall time × 100, from the ticks.
    let cpuPercentFromTicks: Double
    /// CPU time in milliseconds and percent of one core from the process CPU clock.
    let cpuMillisecondsFromClock: Double?
    let cpuPercentFromClock: Double?
    let rssKiBAtStart: UInt64
    let rssKiBAtEnd: UInt64
    let hwmKiBAtEnd: UInt64
    /// Each thread alive at the window's end, busiest first.
    let threads: [ThreadUsage]

    init(role: String, pid: pid_t, start: ProcessSample, end: ProcessSample, threadsAtStart: [ThreadSample], threadsAtEnd: [ThreadSample]) {
        self.role = role
        self.pid = pid
        command = end.command
        let wall = Double(end.monotonicNanoseconds - start.monotonicNanoseconds) / 1e9
        windowSeconds = wall
        clockTicksPerSecond = ProcessSample.clockTicksPerSecond
        ticks = end.ticks &- start.ticks
        cpuPercentFromTicks = Double(ticks) / Double(clockTicksPerSecond) / wall * 100
        if let a = start.cpuNanoseconds, let b = end.cpuNanoseconds, b >= a {
            cpuMillisecondsFromClock = Double(b - a) / 1e6
            cpuPercentFromClock = Double(b - a) / 1e9 / wall * 100
        } else {
            cpuMillisecondsFromClock = nil
            cpuPercentFromClock = nil
        }
        rssKiBAtStart = start.rssKiB
        rssKiBAtEnd = end.rssKiB
        hwmKiBAtEnd = end.hwmKiB
        // A thread started within the window counts from nothing; one that ended within it
        // is not listed (its time is still in the process's CPU clock).
        let before = Dictionary(threadsAtStart.map { ($0.tid, $0) }, uniquingKeysWith: { first, _ in first })
        threads = threadsAtEnd.map { after in
            ThreadUsage(start: before[after.tid] ?? ThreadSample(tid: after.tid, name: after.name, runNanoseconds: 0, runs: 0, voluntarySwitches: 0), end: after)
        }.sorted { $0.cpuMilliseconds > $1.cpuMilliseconds }
    }

    /// The thread that used the most CPU in the window (for a capturing process, the one
    /// reading the device), and the CPU of all the others together, in milliseconds.
    var busiestThread: ThreadUsage? { threads.first }
    var otherThreadsMilliseconds: Double { threads.dropFirst().reduce(0) { $0 + $1.cpuMilliseconds } }
}

/// One thread's CPU over a measurement window, from the scheduler's counts.
struct ThreadUsage: Encodable, Sendable {
    let tid: Int32
    let name: String
    let cpuMilliseconds: Double
    /// How many times it was given a CPU: about once per wake-up.
    let runs: UInt64

    init(start: ThreadSample, end: ThreadSample) {
        tid = end.tid
        name = end.name
        cpuMilliseconds = Double(end.runNanoseconds &- start.runNanoseconds) / 1e6
        runs = end.runs &- start.runs
    }

    var microsecondsPerRun: Double? { runs > 0 ? cpuMilliseconds * 1000 / Double(runs) : nil }
}

/// Samples a set of processes when two given chunks arrive: the start and the end of the
/// measurement window. Called from the chunk-receiving loop, right after the chunk's
/// arrival time has been taken.
final class UsageWindow: Sendable {
    struct Watched: Sendable {
        let role: String
        let pid: pid_t
    }

    let processes: [Watched]
    let startSequence: UInt64
    let endSequence: UInt64
    private struct State {
        var start: [ProcessSample]?
        var end: [ProcessSample]?
        var threadsAtStart: [[ThreadSample]] = []
        var threadsAtEnd: [[ThreadSample]] = []
        var error: String?
    }
    private let state = Locked(State())

    init(processes: [Watched], startSequence: UInt64, endSequence: UInt64) {
        self.processes = processes
        self.startSequence = startSequence
        self.endSequence = endSequence
    }

    func chunkArrived(sequence: UInt64) {
        guard sequence == startSequence || sequence == endSequence else { return }
        let samples: [ProcessSample]
        do {
            samples = try processes.map { try ProcessSample.take($0.pid) }
        } catch {
            state.withLock { if $0.error == nil { $0.error = "sampling at chunk \(sequence): \(error)" } }
            return
        }
        let threads = processes.map { ThreadSample.all(of: $0.pid) }
        state.withLock { s in
            if sequence == startSequence, s.start == nil {
                (s.start, s.threadsAtStart) = (samples, threads)
            } else if sequence == endSequence, s.end == nil {
                (s.end, s.threadsAtEnd) = (samples, threads)
            }
        }
    }

    /// The usage of every process over the window, or an error saying why there is none.
    func result() throws -> [ProcessUsage] {
        let (start, end, threadsAtStart, threadsAtEnd, error) = state.withLock { ($0.start, $0.end, $0.threadsAtStart, $0.threadsAtEnd, $0.error) }
        if let error { throw HarnessError(error) }
        guard let start, let end else {
            throw HarnessError("the CPU window's chunks \(startSequence) and \(endSequence) did not both arrive")
        }
        return processes.indices.map {
            ProcessUsage(role: processes[$0].role, pid: processes[$0].pid, start: start[$0], end: end[$0],
                         threadsAtStart: threadsAtStart[$0], threadsAtEnd: threadsAtEnd[$0])
        }
    }
}
