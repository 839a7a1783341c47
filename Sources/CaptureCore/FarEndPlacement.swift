/// Where a far end read beside the microphone (the prompt's played audio from its pipe, or
/// an echo reference device) meets the microphone's samples: its first sample is placed at
/// the microphone's sample taken at the same moment, by the two streams' clock times
/// (`PlayedReference.startSample`), `laterBy` samples later; what went out before the
/// microphone's first sample is dropped. The echo canceller measures the rest of the delay.
public struct FarEndPlacement: Sendable, Equatable {
    /// The microphone's sample the far end's first one meets, once known (negative: before
    /// the microphone's first).
    public private(set) var startSample: Int?
    /// Whether the far end has been placed (its first samples handed over).
    public private(set) var placed = false
    /// Far samples still to drop before the first handed over.
    private var toDrop = 0
    /// Samples the far end is handed over later than it was read.
    public let laterBy: Int

    public init(laterBy: Int = 0) {
        self.laterBy = laterBy
    }

    /// What to hand to the canceller now of `pending` (the far end's samples read and not
    /// yet handed over, which this takes), given that the far end's first sample went out at
    /// `startedUs` and the microphone's first read returned at `firstReadUs` with
    /// `firstReadFrames` frames (CLOCK_MONOTONIC µs, `rate` Hz): nil while there is nothing to
    /// hand over; `startedAt` (the microphone's sample) with the first samples handed over.
    /// At most `atMost` samples are handed over; the rest stay in `pending`.
    public mutating func place(_ pending: inout [Float], startedUs: UInt64, firstReadUs: UInt64, firstReadFrames: Int,
                               rate: Int, atMost: Int = .max) -> (samples: [Float], startedAt: Int?)? {
        func take() -> [Float] {
            guard pending.count > atMost else {
                defer { pending = [] }
                return pending
            }
            defer { pending.removeFirst(atMost) }
            return Array(pending[0 ..< atMost])
        }
        if placed { return (take(), nil) }
        if startSample == nil {
            let start = PlayedReference.startSample(startedUs: startedUs, firstReadUs: firstReadUs,
                                                    firstReadFrames: firstReadFrames, rate: rate) + laterBy
            startSample = start
            toDrop = max(0, -start)
        }
        let dropped = min(toDrop, pending.count)
        pending.removeFirst(dropped)
        toDrop -= dropped
        guard toDrop == 0, !pending.isEmpty, let start = startSample else { return nil }
        placed = true
        return (take(), max(0, start))
    }
}
