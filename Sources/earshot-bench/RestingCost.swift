import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc

/// What a process costs while it does nothing: its CPU time and how often its threads wake,
/// over a window.
struct RestingCost: Encodable, Sendable {
    let windowSeconds: Double
    /// CPU time (the process CPU clock) per second of the window, in µs.
    let cpuMicrosecondsPerSecond: Double
    /// Wake-ups per second: each time one of its threads went to sleep and was woken
    /// (voluntary context switches), threads started during the window included.
    let wakeupsPerSecond: Double
    /// Threads started during the window (each one that also ended in it is not seen).
    let threadsStarted: Int

    /// One look at a process's threads: CPU time and each thread's voluntary switches.
    struct Sample {
        let monotonicNanoseconds: UInt64
        let cpuNanoseconds: UInt64
        let switchesByThread: [Int32: UInt64]

        static func take(_ pid: pid_t) -> Sample? {
            let now = EarshotDBus.monotonicNanoseconds()
            guard let cpu = ProcessSample.cpuNanoseconds(of: pid) else { return nil }
            let threads = ThreadSample.all(of: pid)
            guard !threads.isEmpty else { return nil }
            let switches = Dictionary(threads.map { ($0.tid, $0.voluntarySwitches) }, uniquingKeysWith: { first, _ in first })
            return Sample(monotonicNanoseconds: now, cpuNanoseconds: cpu, switchesByThread: switches)
        }
    }

    /// Watches `pid` for `window`; nil if it is gone by either end.
    static func measure(_ pid: pid_t, over window: Duration) async throws -> RestingCost? {
        guard let start = Sample.take(pid) else { return nil }
        try await Task.sleep(for: window)
        guard let end = Sample.take(pid), end.cpuNanoseconds >= start.cpuNanoseconds else { return nil }
        let seconds = Double(end.monotonicNanoseconds - start.monotonicNanoseconds) / 1e9
        var wakeups: UInt64 = 0
        var started = 0
        for (thread, switches) in end.switchesByThread {
            if let before = start.switchesByThread[thread] {
                wakeups += switches >= before ? switches - before : 0
            } else {
                wakeups += switches
                started += 1
            }
        }
        return RestingCost(windowSeconds: seconds,
                           cpuMicrosecondsPerSecond: Double(end.cpuNanoseconds - start.cpuNanoseconds) / 1000 / seconds,
                           wakeupsPerSecond: Double(wakeups) / seconds, threadsStarted: started)
    }
}
