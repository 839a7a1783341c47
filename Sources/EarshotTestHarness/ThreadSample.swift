import Foundation
import Glibc

/// One look at a thread of a process: its name, the time it spent on a CPU and the number
/// of times it was given one, as the scheduler counts them (`/proc/PID/task/TID/schedstat`,
/// in nanoseconds, without the ticks' sampling), and how often it went to sleep and was
/// woken (`voluntary_ctxt_switches` in its `status`).
///
/// A thread that sleeps until its device has a period runs once per period, so the
/// difference of two samples tells its CPU time per wake-up.
public struct ThreadSample: Sendable {
    public let tid: Int32
    /// The thread's `comm` (at most 15 characters).
    public let name: String
    public let runNanoseconds: UInt64
    /// Time ready to run but waiting for a processor.
    public let waitNanoseconds: UInt64
    public let runs: UInt64
    public let voluntarySwitches: UInt64

    public init(tid: Int32, name: String, runNanoseconds: UInt64, waitNanoseconds: UInt64 = 0, runs: UInt64, voluntarySwitches: UInt64) {
        (self.tid, self.name, self.runNanoseconds, self.waitNanoseconds, self.runs) = (tid, name, runNanoseconds, waitNanoseconds, runs)
        self.voluntarySwitches = voluntarySwitches
    }

    /// Every thread of `pid` that could be read; empty when the process is gone.
    public static func all(of pid: pid_t) -> [ThreadSample] {
        let directory = "/proc/\(pid)/task"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return entries.compactMap { entry -> ThreadSample? in
            guard let tid = Int32(entry),
                  let schedstat = try? String(contentsOfFile: "\(directory)/\(entry)/schedstat", encoding: .utf8),
                  let name = try? String(contentsOfFile: "\(directory)/\(entry)/comm", encoding: .utf8),
                  let status = try? String(contentsOfFile: "\(directory)/\(entry)/status", encoding: .utf8) else { return nil }
            // time on a CPU (ns), time waiting to run (ns), timeslices run
            let fields = schedstat.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            guard fields.count >= 3, let run = UInt64(fields[0]), let wait = UInt64(fields[1]), let runs = UInt64(fields[2]),
                  let switches = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") })
                      .flatMap({ UInt64($0.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") }) else { return nil }
            return ThreadSample(tid: tid, name: name.trimmingCharacters(in: .newlines), runNanoseconds: run, waitNanoseconds: wait, runs: runs,
                                voluntarySwitches: switches)
        }
    }
}
