import CALSA
import Glibc

/// How fast a `PlaybackStream` writes.
public enum PlaybackPacing: String, Sendable, CaseIterable {
    /// As fast as the device accepts. Sound cards accept in real time; `file` and `null`
    /// PCMs accept everything at once.
    case device
    /// Never more than one buffer ahead of real time, measured on `CLOCK_MONOTONIC` from the
    /// first write. Meant for non-real-time PCMs (`file`, `null`) that must behave like a
    /// live speaker.
    case realtime
}

/// A playback PCM opened with exactly `format` (S16_LE, any channel count), writing queued
/// segments on a dedicated thread.
///
/// Segments can be queued before and while playing; they play back to back in order.
/// `finish()` says no more will come: the stream then drains the device and ends. The PCM
/// is non-blocking and the writing thread polls it together with a wake-up pipe, so
/// `enqueue`, `finish` and `stop` take effect at once, whatever the thread is waiting for.
///
/// Thread safety: every method may be called from any thread; the callbacks run on the
/// writing thread.
public final class PlaybackStream: Sendable {
    public let device: String
    public let format: PCMFormat
    public let pacing: PlaybackPacing
    /// The period size the device granted.
    public let grantedPeriodFrames: UInt32
    /// The buffer size the device granted (about `bufferMilliseconds`).
    public let grantedBufferFrames: UInt32

    let loop: PlaybackLoop

    /// Opens `device` for playback with `snd_pcm_set_params`: access RW_INTERLEAVED, format
    /// S16_LE, `format.channels` and `format.sampleRate` exactly (software resampling only
    /// when the PCM is a `plug`, which may convert; any other PCM must take the rate as it
    /// is), a buffer of about `bufferMilliseconds` in four periods. Playback starts once a
    /// period is written. A refused value is `.unsupported` quoting libasound. Does not start
    /// writing.
    public init(device: String, format: PCMFormat, bufferMilliseconds: UInt32 = 100,
                pacing: PlaybackPacing = .device) throws(PlaybackError) {
        guard format.bitsPerSample == 16 else {
            throw .unsupported(device: device, message:
                "\(format.bitsPerSample) bits per sample is not supported (EarshotALSA plays S16_LE)")
        }
        guard format.channels > 0 else { throw .unsupported(device: device, message: "channel count 0 is not supported") }
        guard format.sampleRate > 0 else { throw .unsupported(device: device, message: "sample rate 0 Hz is not supported") }
        guard bufferMilliseconds > 0 else { throw .unsupported(device: device, message: "a buffer of 0 ms is not supported") }

        let pcm: OpaquePointer = try PCMSetup<ALSAPlayback>.open(device, stream: SND_PCM_STREAM_PLAYBACK)
        let granted: (period: UInt32, buffer: UInt32)
        let thread: PCMThread<ALSAPlayback>
        do {
            granted = try Self.configure(pcm, device: device, format: format, bufferMilliseconds: bufferMilliseconds)
            thread = try PCMThread(pcm: pcm, device: device)
        } catch {
            snd_pcm_close(pcm)
            throw error
        }
        self.device = device
        self.format = format
        self.pacing = pacing
        grantedPeriodFrames = granted.period
        grantedBufferFrames = granted.buffer
        loop = PlaybackLoop(thread: thread, format: format, periodFrames: Int(granted.period),
                            bufferFrames: Int(granted.buffer), pacing: pacing)
    }

    deinit {
        loop.stop()
    }

    /// Queues interleaved samples (`format.channels` per frame; a trailing partial frame is
    /// completed with zeros) to play after everything queued before. Returns false, and
    /// drops the samples, once `finish()` or `stop()` was called or the stream has ended.
    @discardableResult
    public func enqueue(_ samples: [Int16]) -> Bool {
        loop.enqueue(samples)
    }

    /// Frames queued and not yet handed to the device; 0 once the stream has stopped or
    /// ended. A producer that renders ahead can hold back while this is high.
    public var pendingFrames: Int { loop.pendingFrames }

    /// No more segments: once everything queued has been written, the stream drains the
    /// device (waits until the last frame has played) and ends with `onEnd(nil)`.
    public func finish() {
        loop.finish()
    }

    /// Starts the writing thread.
    ///
    /// `onFirstFrame(monotonicMicroseconds)` is called once, on that thread, right after the
    /// first frames were accepted by the device (`CLOCK_MONOTONIC`, µs). `onEnd` is called
    /// exactly once, on that thread, after the PCM is closed: `onEnd(nil)` after the drain
    /// that follows `finish()`, or after `stop()`; `onEnd(.deviceGone(…))` when the device
    /// vanished and `onEnd(.io(…))` on any other unrecoverable error. Underruns (`-EPIPE`)
    /// and suspends (`-ESTRPIPE`) are recovered with `snd_pcm_recover` and counted in
    /// `recoveries`; the stream goes on.
    ///
    /// Call `start` once; a later call is ignored, except after `stop()`: then `onEnd(nil)`
    /// is called at once on the calling thread.
    public func start(onFirstFrame: @escaping @Sendable (UInt64) -> Void = { _ in },
                      onEnd: @escaping @Sendable (PlaybackError?) -> Void) {
        loop.start(onFirstFrame: onFirstFrame, onEnd: onEnd)
    }

    /// Stops at once: discards what is queued and what the device still holds
    /// (`snd_pcm_drop`), closes the PCM, and returns after `onEnd` was called. Idempotent
    /// and safe from any thread; from the writing thread itself (inside a callback) it only
    /// requests the stop and returns.
    public func stop() {
        loop.stop()
    }

    /// The device's own latency in frames, beyond its buffer (from `snd_pcm_delay` at the
    /// first write): nil until the first frames are written.
    public var latencyFrames: Int? {
        let frames = loop.latencyFrames.load(ordering: .relaxed)
        return frames < 0 ? nil : frames
    }

    /// Frames the device has accepted so far.
    public var framesWritten: UInt64 { loop.framesWritten.load(ordering: .relaxed) }

    /// How many underruns, suspends and bad-state errors were recovered so far.
    public var recoveries: Int { loop.recoveries.load(ordering: .relaxed) }

    // MARK: - Opening

    private static func configure(
        _ pcm: OpaquePointer, device: String, format: PCMFormat, bufferMilliseconds: UInt32
    ) throws(PlaybackError) -> (period: UInt32, buffer: UInt32) {
        let resample: Int32 = snd_pcm_type(pcm) == SND_PCM_TYPE_PLUG ? 1 : 0
        let (result, details) = ALSADiagnostics.collecting {
            snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED,
                               format.channels, format.sampleRate, resample, bufferMilliseconds * 1000)
        }
        if result < 0 {
            throw PCMSetup<ALSAPlayback>.setupError(device: device, code: result, details: details,
                                      what: "S16_LE, \(format.channels) channel(s), \(format.sampleRate) Hz")
        }
        var buffer: snd_pcm_uframes_t = 0
        var period: snd_pcm_uframes_t = 0
        _ = snd_pcm_get_params(pcm, &buffer, &period)
        period = max(1, period)

        // Start as soon as one period is in, instead of snd_pcm_set_params's full buffer.
        var params: OpaquePointer?
        let allocated = snd_pcm_sw_params_malloc(&params)
        guard allocated >= 0, let params else {
            throw .io(device: device, code: allocated, message: alsaMessage(allocated))
        }
        defer { snd_pcm_sw_params_free(params) }
        var applied = snd_pcm_sw_params_current(pcm, params)
        if applied >= 0 { applied = snd_pcm_sw_params_set_start_threshold(pcm, params, period) }
        if applied >= 0 { applied = snd_pcm_sw_params_set_avail_min(pcm, params, period) }
        if applied >= 0 { applied = snd_pcm_sw_params(pcm, params) }
        if applied < 0 {
            throw .unsupported(device: device, message: "cannot apply the software parameters: " + alsaMessage(applied))
        }
        return (UInt32(clamping: period), UInt32(clamping: buffer))
    }
}
