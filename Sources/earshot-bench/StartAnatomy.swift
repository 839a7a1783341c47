import EarshotTestHarness
import Foundation
import Glibc

/// Where a start's time went, read from the kernel's counts for the started process the
/// moment its name arrived: the time its threads ran, the time they were ready but waited
/// for a processor, and the faults that read its pages from disk. What is left of the wall
/// time is time it was blocked (on the disk, on a reply, on the bus) or not yet running.
struct StartAnatomy: Encodable, Sendable {
    /// Spawn to the name's arrival at the client.
    let wallMilliseconds: Double
    /// The process's threads on a processor (their `schedstat`'s first field, summed).
    let onCpuMilliseconds: Double
    /// Its threads ready to run but waiting for a processor (the second field, summed).
    let runQueueMilliseconds: Double
    /// Page faults that had to read from disk, and those that did not.
    let majorFaults: UInt64
    let minorFaults: UInt64
    /// Times its threads gave up the processor to wait (for I/O, a futex, a poll).
    let voluntarySwitches: UInt64

    /// Neither running nor waiting for a processor: blocked, or not yet exec'd.
    var otherMilliseconds: Double { max(0, wallMilliseconds - onCpuMilliseconds - runQueueMilliseconds) }

    /// `pid`'s counts now, for a start that took `wallMilliseconds`; nil when it has gone.
    /// Threads that ended before now are not counted.
    static func read(_ pid: pid_t, wallMilliseconds: Double) -> StartAnatomy? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After the command's closing parenthesis: state (field 3), ... minflt (10), majflt (12).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 10, let minor = UInt64(fields[7]), let major = UInt64(fields[9]) else { return nil }
        let threads = ThreadSample.all(of: pid)
        let onCpu = threads.reduce(0) { $0 + $1.runNanoseconds }, waiting = threads.reduce(0) { $0 + $1.waitNanoseconds }
        let switches = threads.reduce(0) { $0 + $1.voluntarySwitches }
        return StartAnatomy(wallMilliseconds: wallMilliseconds, onCpuMilliseconds: Double(onCpu) / 1e6,
                            runQueueMilliseconds: Double(waiting) / 1e6, majorFaults: major, minorFaults: minor,
                            voluntarySwitches: switches)
    }

    /// "wall = cpu + queue + other ms, faults major/minor, waits" for a table's line.
    var summary: String {
        func ms(_ value: Double) -> String { String(format: "%.1f", value) }
        return "\(ms(wallMilliseconds)) = on cpu \(ms(onCpuMilliseconds)) + run queue \(ms(runQueueMilliseconds)) + blocked "
            + "\(ms(otherMilliseconds)) ms; faults \(majorFaults) major, \(minorFaults) minor; \(voluntarySwitches) waits"
    }
}
