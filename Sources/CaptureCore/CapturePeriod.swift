/// The ALSA period a pass-thru asks for: the fewest wake-ups that still deliver every
/// chunk the moment its last frame has been read.
///
/// - One period per chunk: a chunk is complete exactly when a read returns, and the reading
///   thread wakes once per chunk, whatever `ChunkMs` is.
/// - With `EndOnSilenceMs`, at most 100 ms: silence is judged on each read, so a long period
///   would end the pass-thru up to a period late and with that much extra audio.
/// - At most the session's buffer duration (`IOBufferDuration`) when it sets one.
///
/// Nothing heard is lost to a long period: a user's end reads what the device already
/// holds before the last chunk goes out (`EndReason.keepsHeardAudio`).
public enum CapturePeriod {
    /// The period for silence detection, in milliseconds.
    public static let silenceWatchMs: UInt32 = 100

    /// When (µs, the same clock as `startUs`) a pass-thru whose device started capturing at
    /// `startUs` ends by `MaxDuration`: reads complete a period at a time, so at the end of
    /// the period that holds its last frame.
    public static func endUs(startUs: UInt64, maxFrames: UInt64, periodFrames: UInt32, rate: UInt32) -> UInt64 {
        let period = UInt64(max(1, periodFrames))
        let periods = (maxFrames + period - 1) / period
        return startUs + periods * period * 1_000_000 / UInt64(max(1, rate))
    }

    /// Frames per period (at least 1) for `request`; `sessionLimitSeconds` is the session's
    /// buffer duration, if any.
    public static func frames(for request: PassThruRequest, sessionLimitSeconds: Double? = nil) -> UInt32 {
        let rate = UInt64(request.samplingRate)
        var frames = rate * UInt64(request.chunkMs) / 1000
        if request.endOnSilenceMs > 0 {
            frames = min(frames, rate * UInt64(silenceWatchMs) / 1000)
        }
        if let seconds = sessionLimitSeconds, seconds > 0 {
            frames = min(frames, UInt64(max(1, seconds * Double(rate))))
        }
        return UInt32(clamping: max(1, frames))
    }
}
