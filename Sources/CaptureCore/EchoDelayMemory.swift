/// The echo delays a capture service has measured, one for each path an echo takes: which
/// far end (the prompt as played, or the echo reference device) reaches which input. A head
/// unit's output buffers and cabin stay as they are from one pass-thru to the next, so the
/// next pass-thru's canceller can start in step with its far end instead of passing the echo
/// through until it has measured the delay again. Kept in microseconds: a pass-thru at
/// another rate takes the same delay in its own samples.
public struct EchoDelayMemory: Sendable, Equatable {
    /// The far end a pass-thru cancels.
    public enum FarEnd: String, Sendable, Hashable {
        /// The prompt, as the alert service played it (`BargeIn`).
        case prompt
        /// What the echo reference device hears the speakers play (`EchoCancel`).
        case device

        /// The far end `request` cancels, or nil when it cancels none.
        public init?(of request: PassThruRequest) {
            guard request.cancelsEcho else { return nil }
            self = request.echoCancel ? .device : .prompt
        }
    }

    private struct Path: Hashable {
        let farEnd: FarEnd
        let input: String
    }

    private var delays: [Path: Int64] = [:]

    public init() {}

    /// The delay last measured from `farEnd` to `input`, in samples at `rate`; nil when none
    /// has been.
    public func delay(from farEnd: FarEnd, to input: String, rate: Int) -> Int? {
        guard rate > 0, let microseconds = delays[Path(farEnd: farEnd, input: input)] else { return nil }
        return Int((microseconds * Int64(rate) + 500_000) / 1_000_000)
    }

    /// Keeps `samples` at `rate`, measured from `farEnd` to `input`, in place of the last.
    public mutating func remember(_ samples: Int, at rate: Int, from farEnd: FarEnd, to input: String) {
        guard rate > 0, samples >= 0 else { return }
        delays[Path(farEnd: farEnd, input: input)] = (Int64(samples) * 1_000_000 + Int64(rate) / 2) / Int64(rate)
    }
}
