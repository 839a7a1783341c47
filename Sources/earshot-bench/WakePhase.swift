/// A place in time shared by the capture benchmark's periodic threads: each does its work
/// at `epochNanoseconds` (CLOCK_MONOTONIC) + `offsetNanoseconds` + a whole number of its
/// periods, so that threads given different offsets wake at moments chosen apart instead of
/// wherever their starts happened to fall.
struct WakePhase: Sendable {
    let epochNanoseconds: UInt64
    let offsetNanoseconds: UInt64

    /// The first of this phase's times with `period` at or after `now`.
    func next(atOrAfter now: UInt64, period: UInt64) -> UInt64 {
        precondition(period > 0)
        let start = epochNanoseconds + offsetNanoseconds
        guard now > start else { return start }
        return start + (now - start + period - 1) / period * period
    }
}
