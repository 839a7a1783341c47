import EarshotDBus
import Foundation
import Glibc

/// One look at a process's CPU time and memory.
struct ProcessSample: Sendable {
    /// The process's `comm` (at most 15 characters).
    let command: String
    /// CLOCK_MONOTONIC when the sample was taken.
    let monotonicNanoseconds: UInt64
    /// utime + stime from /proc/<pid>/stat, in clock ticks (all threads, live and ended).
    let ticks: UInt64
    /// The process's CPU clock (`clock_getcpuclockid`): the same time in nanoseconds, for a
    /// figure finer than one tick. Nil when the clock cannot be read.
    let cpuNanoseconds: UInt64?
    /// VmRSS and VmHWM from /proc/<pid>/status, in KiB.
    let rssKiB: UInt64
    let hwmKiB: UInt64

    static let clockTicksPerSecond = UInt64(max(1, sysconf(Int32(_SC_CLK_TCK))))

    /// Samples `pid`; throws if it is gone or its files cannot be parsed.
    static func take(_ pid: pid_t) throws -> ProcessSample {
        let now = EarshotDBus.monotonicNanoseconds()
        let stat = try read("/proc/\(pid)/stat")
        // The command is in parentheses and may hold spaces; the fields after it start
        // with field 3 (state), so utime (14) and stime (15) are the 12th and 13th.
        guard let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else {
            throw BenchmarkError("/proc/\(pid)/stat: unexpected format")
        }
        let command = String(stat[stat.index(after: open)..<close])
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let utime = UInt64(fields[11]), let stime = UInt64(fields[12]) else {
            throw BenchmarkError("/proc/\(pid)/stat: no utime/stime")
        }
        var cpu: UInt64?
        var clock = clockid_t()
        if clock_getcpuclockid(pid, &clock) == 0 {
            var time = timespec()
            if clock_gettime(clock, &time) == 0 {
                cpu = UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
            }
        }
        let status = try read("/proc/\(pid)/status")
        func kibibytes(_ key: String) -> UInt64 {
            for line in status.split(separator: "\n") where line.hasPrefix(key + ":") {
                return line.split(separator: " ", omittingEmptySubsequences: true)
                    .lazy.compactMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }.first ?? 0
            }
            return 0
        }
        return ProcessSample(command: command, monotonicNanoseconds: now, ticks: utime + stime, cpuNanoseconds: cpu,
                             rssKiB: kibibytes("VmRSS"), hwmKiB: kibibytes("VmHWM"))
    }

    private static func read(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BenchmarkError("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                bytes += buffer[..<n]
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 {
                throw BenchmarkError("cannot read \(path): \(String(cString: strerror(errno)))")
            } else {
                break
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The whole machine's CPU counters (the `cpu` line of /proc/stat), to tell how busy the
/// host was while a configuration ran.
struct HostSample: Sendable {
    let busy: UInt64
    let total: UInt64

    static func take() -> HostSample? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        let values = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard values.count >= 5 else { return nil }
        // user nice system idle iowait irq softirq steal (guest time is already in user)
        let counted = values.prefix(8)
        let total = counted.reduce(0, +)
        return HostSample(busy: total - values[3] - values[4], total: total)
    }

    /// Percent of all cores busy between `start` and `end`.
    static func busyPercent(_ start: HostSample?, _ end: HostSample?) -> Double? {
        guard let start, let end, end.total > start.total else { return nil }
        return Double(end.busy &- start.busy) / Double(end.total - start.total) * 100
    }
}

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

    init(role: String, pid: pid_t, start: ProcessSample, end: ProcessSample) {
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
    }
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
        state.withLock { s in
            if sequence == startSequence, s.start == nil { s.start = samples } else if sequence == endSequence, s.end == nil { s.end = samples }
        }
    }

    /// The usage of every process over the window, or an error saying why there is none.
    func result() throws -> [ProcessUsage] {
        let (start, end, error) = state.withLock { ($0.start, $0.end, $0.error) }
        if let error { throw BenchmarkError(error) }
        guard let start, let end else {
            throw BenchmarkError("the CPU window's chunks \(startSequence) and \(endSequence) did not both arrive")
        }
        return processes.indices.map { ProcessUsage(role: processes[$0].role, pid: processes[$0].pid, start: start[$0], end: end[$0]) }
    }
}
