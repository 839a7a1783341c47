/// The echo delays a capture service has measured, one for each path an echo takes: which
/// far end reaches which input. From the echo reference device (`EchoCancel`) the delay is
/// the hardware's: the speakers' monitor against the microphone, through the same output,
/// cabin and input from one pass-thru to the next, so the next pass-thru's canceller can
/// start in step with its far end instead of passing the echo through until it has measured
/// the delay again. The prompt as played (`BargeIn`) is not remembered: its delay counts
/// from when the alert service handed its first frame to the output, and how much that
/// output already held then changes from one prompt to the next (on the same services,
/// 142 ms and then 294 ms). Kept in microseconds: a pass-thru at another rate takes the same
/// delay in its own samples.
public struct EchoDelayMemory: Sendable, Equatable {
    /// The far end a pass-thru cancels, whose delay is kept.
    public enum FarEnd: String, Sendable, Hashable {
        /// What the echo reference device hears the speakers play (`EchoCancel`).
        case device

        /// The far end `request` cancels when its delay is kept; nil when it cancels none,
        /// or only the prompt (`BargeIn` alone).
        public init?(of request: PassThruRequest) {
            guard request.echoCancel else { return nil }
            self = .device
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
