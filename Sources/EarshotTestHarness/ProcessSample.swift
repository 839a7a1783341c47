import EarshotDBus
import Foundation
import Glibc

/// One look at a process's CPU time and memory.
public struct ProcessSample: Sendable {
    /// The process's `comm` (at most 15 characters).
    public let command: String
    /// CLOCK_MONOTONIC when the sample was taken.
    public let monotonicNanoseconds: UInt64
    /// utime + stime from /proc/<pid>/stat, in clock ticks (all threads, live and ended).
    public let ticks: UInt64
    /// The process's CPU clock (`clock_getcpuclockid`): the same time in nanoseconds, for a
    /// figure finer than one tick. Nil when the clock cannot be read.
    public let cpuNanoseconds: UInt64?
    /// VmRSS and VmHWM from /proc/<pid>/status, in KiB.
    public let rssKiB: UInt64
    public let hwmKiB: UInt64
    /// VmRSS's parts: anonymous memory (heap, stacks) and mapped files (the binary and
    /// its libraries, of which the kernel maps what it has read ahead), in KiB.
    public let rssAnonKiB: UInt64
    public let rssFileKiB: UInt64

    public static let clockTicksPerSecond = UInt64(max(1, sysconf(Int32(_SC_CLK_TCK))))

    /// Samples `pid`; throws if it is gone or its files cannot be parsed.
    public static func take(_ pid: pid_t) throws -> ProcessSample {
        let now = EarshotDBus.monotonicNanoseconds()
        let stat = try read("/proc/\(pid)/stat")
        // The command is in parentheses and may hold spaces; the fields after it start
        // with field 3 (state), so utime (14) and stime (15) are the 12th and 13th.
        guard let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else {
            throw HarnessError("/proc/\(pid)/stat: unexpected format")
        }
        let command = String(stat[stat.index(after: open)..<close])
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let utime = UInt64(fields[11]), let stime = UInt64(fields[12]) else {
            throw HarnessError("/proc/\(pid)/stat: no utime/stime")
        }
        let cpu = cpuNanoseconds(of: pid)
        let status = try read("/proc/\(pid)/status")
        func kibibytes(_ key: String) -> UInt64 {
            for line in status.split(separator: "\n") where line.hasPrefix(key + ":") {
                return line.split(separator: " ", omittingEmptySubsequences: true)
                    .lazy.compactMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }.first ?? 0
            }
            return 0
        }
        return ProcessSample(command: command, monotonicNanoseconds: now, ticks: utime + stime, cpuNanoseconds: cpu,
                             rssKiB: kibibytes("VmRSS"), hwmKiB: kibibytes("VmHWM"), rssAnonKiB: kibibytes("RssAnon"),
                             rssFileKiB: kibibytes("RssFile"))
    }

    /// `pid`'s CPU clock (`clock_getcpuclockid`): the CPU time of all its threads, in
    /// nanoseconds; nil when it cannot be read.
    public static func cpuNanoseconds(of pid: pid_t) -> UInt64? {
        var clock = clockid_t()
        var time = timespec()
        guard clock_getcpuclockid(pid, &clock) == 0, clock_gettime(clock, &time) == 0 else { return nil }
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private static func read(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HarnessError("cannot open \(path): \(String(cString: strerror(errno)))") }
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
                throw HarnessError("cannot read \(path): \(String(cString: strerror(errno)))")
            } else {
                break
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The whole machine's CPU counters (the `cpu` line of /proc/stat), to tell how busy the
/// host was while a configuration ran.
public struct HostSample: Sendable {
    public let busy: UInt64
    public let total: UInt64

    public static func take() -> HostSample? {
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
    public static func busyPercent(_ start: HostSample?, _ end: HostSample?) -> Double? {
        guard let start, let end, end.total > start.total else { return nil }
        return Double(end.busy &- start.busy) / Double(end.total - start.total) * 100
    }
}
