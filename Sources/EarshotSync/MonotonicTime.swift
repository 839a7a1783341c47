import Glibc

/// CLOCK_MONOTONIC in nanoseconds: the clock of deadlines, timeouts and `ThreadLock`'s
/// timed waits.
public func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// CLOCK_MONOTONIC in microseconds, the unit of `MonotonicUs` in signals.
public func monotonicMicroseconds() -> UInt64 { monotonicNanoseconds() / 1_000 }

extension Duration {
    /// Whole nanoseconds: 0 for a duration of zero or less, at most `UInt64.max / 2` (so
    /// that adding it to a monotonic time cannot overflow).
    public var nanosecondsClamped: UInt64 {
        guard self > .zero else { return 0 }
        let (seconds, attoseconds) = components
        let (scaled, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? UInt64.max / 2 : min(UInt64.max / 2, scaled &+ UInt64(attoseconds / 1_000_000_000))
    }
}
