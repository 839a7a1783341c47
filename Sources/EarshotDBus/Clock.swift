import Glibc

/// CLOCK_MONOTONIC in nanoseconds.
public func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// CLOCK_MONOTONIC in microseconds, the unit of `MonotonicUs` in signals.
public func monotonicMicroseconds() -> UInt64 { monotonicNanoseconds() / 1_000 }

extension Duration {
    var nanosecondsClamped: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (scaled, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? UInt64.max / 2 : scaled &+ UInt64(attoseconds / 1_000_000_000)
    }
}
