/// The echo delays a capture service has measured from its echo reference device
/// (`EchoCancel`) to each input. That delay is the hardware's: the speakers' monitor against
/// the microphone, through the same output, cabin and input from one pass-thru to the next,
/// so the next pass-thru's canceller can start in step with its far end instead of passing
/// the echo through until it has measured the delay again. The prompt as played (`BargeIn`
/// alone) is not remembered: its delay counts from when the alert service handed its first
/// frame to the output, and how much that output already held then changes from one prompt
/// to the next (on the same services, 142 ms and then 294 ms). Kept in microseconds: a
/// pass-thru at another rate takes the same delay in its own samples.
public struct EchoDelayMemory: Sendable, Equatable {
    private var delays: [String: Int64] = [:]

    public init() {}

    /// Whether `request`'s measured delay is kept and its canceller started from the last:
    /// only when it cancels what the echo reference hears.
    public static func remembers(_ request: PassThruRequest) -> Bool {
        request.echoCancel
    }

    /// The delay last measured from the echo reference to `input`, in samples at `rate`;
    /// nil when none has been.
    public func delay(to input: String, rate: Int) -> Int? {
        guard rate > 0, let microseconds = delays[input] else { return nil }
        return Int((microseconds * Int64(rate) + 500_000) / 1_000_000)
    }

    /// Keeps `samples` at `rate`, measured from the echo reference to `input`, in place of
    /// the last.
    public mutating func remember(_ samples: Int, at rate: Int, to input: String) {
        guard rate > 0, samples >= 0 else { return }
        delays[input] = (Int64(samples) * 1_000_000 + Int64(rate) / 2) / Int64(rate)
    }
}
