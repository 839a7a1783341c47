import CALSA
import Glibc

/// A capture PCM opened with exactly `format` and reading on a dedicated thread.
///
/// The PCM is opened in non-blocking mode. The reading thread polls the PCM's descriptors
/// together with a wake-up pipe, so `stop()` is prompt even while no period is ready or
/// while real-time pacing sleeps.
public final class CaptureStream: Sendable {
    public let device: String
    public let format: PCMFormat
    public let pacing: CapturePacing
    /// The period size the device granted (requested with `set_period_size_near`).
    public let grantedPeriodFrames: UInt32
    /// The buffer size the device granted (about four periods, `set_buffer_size_near`).
    public let grantedBufferFrames: UInt32

    let loop: CaptureLoop

    /// Opens `device` for capture: access RW_INTERLEAVED; format, channels and rate set
    /// exactly (rate resampling disabled with `snd_pcm_hw_params_set_rate_resample(…, 0)`
    /// unless the PCM's type is `SND_PCM_TYPE_PLUG`); a refused value is `.unsupported`
    /// naming what was refused and what the device offers. Period size near `periodFrames`,
    /// buffer about four periods; the granted values are read back. Does not start reading.
    public init(device: String, format: PCMFormat, periodFrames: UInt32, pacing: CapturePacing) throws(ALSAError) {
        try Self.validate(device: device, format: format, periodFrames: periodFrames)
        let pcm = try CaptureDevice.openCapture(device)
        let granted: (period: UInt32, buffer: UInt32)
        do {
            granted = try Self.configure(pcm, device: device, format: format, periodFrames: periodFrames)
        } catch {
            snd_pcm_close(pcm)
            throw error
        }
        let thread: PCMThread<ALSACapture>
        do {
            thread = try PCMThread(pcm: pcm, device: device)
        } catch {
            snd_pcm_close(pcm)
            throw error
        }
        self.device = device
        self.format = format
        self.pacing = pacing
        self.grantedPeriodFrames = granted.period
        self.grantedBufferFrames = granted.buffer
        self.loop = CaptureLoop(thread: thread, format: format, periodFrames: Int(granted.period),
                                bufferFrames: Int(granted.buffer), pacing: pacing)
    }

    deinit {
        loop.stop()
    }

    /// Starts the reading thread.
    ///
    /// `onData(bytes, frames, monotonicMicroseconds)` is called on that thread for every read
    /// that returned frames: `bytes` is `frames * format.bytesPerFrame` bytes of interleaved
    /// PCM exactly as ALSA delivered them, `monotonicMicroseconds` the `CLOCK_MONOTONIC` time
    /// right after the read returned. Reads ask for whole periods; short reads are delivered
    /// as they come.
    ///
    /// Overruns (`-EPIPE`) and suspends (`-ESTRPIPE`) are recovered and reading goes on;
    /// every recovery is counted in `recoveries`. A vanished device (`-ENODEV`,
    /// `SND_PCM_STATE_DISCONNECTED`, or `-EBADFD` / `-EIO` that a prepare does not cure) ends
    /// the stream with `onEnd(.deviceGone(…))`, any other unrecoverable error with
    /// `onEnd(.io(…))`, and `stop()` with `onEnd(nil)`. `onEnd` is called exactly once, on the
    /// reading thread, after the last `onData` and after the PCM is closed.
    ///
    /// With `timestamps` `.firstRead`, only the first read is timed; later ones get 0 for
    /// `monotonicMicroseconds` and cost no clock read (for a consumer that needs no times).
    ///
    /// With a `direct` consumer, reads after the first go where it says, while it says so,
    /// and not to `onData` (see `DirectCaptureConsumer`).
    ///
    /// Call `start` once. A later call is ignored, except after `stop()`: then the stream
    /// has already ended and `onEnd(nil)` is called at once on the calling thread.
    public func start(timestamps: CaptureTimestamps = .everyRead, direct: (any DirectCaptureConsumer)? = nil,
                      onData: @escaping @Sendable ([UInt8], Int, UInt64) -> Void,
                      onEnd: @escaping @Sendable (ALSAError?) -> Void) {
        loop.start(timestamps: timestamps, direct: direct, onData: onData, onEnd: onEnd)
    }

    /// Makes the reading thread ask its direct consumer again where reads go, before its
    /// next read (after reporting what went out directly so far). Safe from any thread.
    public func redirect() {
        loop.redirect()
    }

    /// Stops reading and closes the PCM. Returns once the reading thread has called `onEnd`
    /// and the PCM is closed (promptly: the thread is woken through its pipe, never waits for
    /// a whole period). Idempotent and safe from any thread. On the reading thread itself
    /// (inside `onData` or `onEnd`) it only requests the stop and returns at once; `onData`
    /// is then not called again.
    ///
    /// `draining` first reads what has already been captured and delivers it to `onData`:
    /// everything the device holds (`snd_pcm_avail`), or with real-time pacing the frames
    /// heard by now and not yet delivered. Those reads never wait, so a draining stop is as
    /// prompt. Nothing is read after an error, or when the stream already ended.
    public func stop(draining: Bool = false) {
        loop.stop(draining: draining)
    }

    /// How many overruns, suspends and bad-state errors were recovered so far.
    public var recoveries: Int { loop.recoveries.load(ordering: .relaxed) }

    /// Frames read so far (delivered to `onData` or written directly).
    public var framesRead: UInt64 { loop.framesRead.load(ordering: .relaxed) }

    // MARK: - Opening

    private static func validate(device: String, format: PCMFormat, periodFrames: UInt32) throws(ALSAError) {
        guard PCMFormat.sampleFormat(bits: format.bitsPerSample) != nil else {
            throw .unsupported(device: device, message:
                "\(format.bitsPerSample) bits per sample is not supported (EarshotALSA captures 8-bit U8 or 16-bit S16_LE)")
        }
        guard format.channels > 0 else {
            throw .unsupported(device: device, message: "channel count 0 is not supported")
        }
        guard format.sampleRate > 0 else {
            throw .unsupported(device: device, message: "sample rate 0 Hz is not supported")
        }
        guard periodFrames > 0 else {
            throw .unsupported(device: device, message: "a period of 0 frames is not supported")
        }
    }

    /// Sets the hardware and software parameters; returns the granted period and buffer sizes.
    private static func configure(
        _ pcm: OpaquePointer, device: String, format: PCMFormat, periodFrames: UInt32
    ) throws(ALSAError) -> (period: UInt32, buffer: UInt32) {
        // A refusal of a requested value: .unsupported, unless the device went away meanwhile.
        func refused(_ code: Int32, _ message: String) -> ALSAError {
            if code == -ENODEV {
                return .deviceGone(device: device, message: message + ": " + alsaMessage(code))
            }
            return .unsupported(device: device, message: message)
        }
        let granted = try HardwareParameters.withAllocated(device: device) { params throws(ALSAError) -> (UInt32, UInt32) in
            let (anyResult, anyDetails) = ALSADiagnostics.collecting { snd_pcm_hw_params_any(pcm, params) }
            if anyResult < 0 {
                throw CaptureDevice.setupError(device: device, code: anyResult, details: anyDetails,
                                               what: "cannot read the hardware parameters")
            }
            if snd_pcm_type(pcm) != SND_PCM_TYPE_PLUG {
                let result = snd_pcm_hw_params_set_rate_resample(pcm, params, 0)
                if result < 0 {
                    throw refused(result, "cannot disable rate resampling: " + alsaMessage(result))
                }
            }
            var result = snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED)
            if result < 0 {
                throw refused(result, "interleaved read access (RW_INTERLEAVED) is not supported")
            }
            let sampleFormat = PCMFormat.sampleFormat(bits: format.bitsPerSample) ?? SND_PCM_FORMAT_UNKNOWN
            result = snd_pcm_hw_params_set_format(pcm, params, sampleFormat)
            if result < 0 {
                let name = PCMFormat.formatName(bits: format.bitsPerSample)
                throw refused(result, "sample format \(name) (\(format.bitsPerSample) bits) is not supported"
                              + " (device offers \(HardwareParameters.offeredFormats(pcm, params)))")
            }
            result = snd_pcm_hw_params_set_channels(pcm, params, format.channels)
            if result < 0 {
                let offered = HardwareParameters.channelRange(params)
                throw refused(result, "channel count \(format.channels) is not supported"
                              + " (device offers \(offered.lowerBound)..\(offered.upperBound) channels)")
            }
            result = snd_pcm_hw_params_set_rate(pcm, params, format.sampleRate, 0)
            if result < 0 {
                let offered = HardwareParameters.rateRange(params)
                throw refused(result, "sample rate \(format.sampleRate) Hz is not supported"
                              + " (device offers \(offered.lowerBound)..\(offered.upperBound))")
            }
            var period = snd_pcm_uframes_t(periodFrames)
            var direction: Int32 = 0
            result = snd_pcm_hw_params_set_period_size_near(pcm, params, &period, &direction)
            if result < 0 {
                throw refused(result, "no period size near \(periodFrames) frames is possible: " + alsaMessage(result))
            }
            var buffer = period * 4
            result = snd_pcm_hw_params_set_buffer_size_near(pcm, params, &buffer)
            if result < 0 {
                throw refused(result, "no buffer size near \(period * 4) frames is possible: " + alsaMessage(result))
            }
            let (applied, details) = ALSADiagnostics.collecting { snd_pcm_hw_params(pcm, params) }
            if applied < 0 {
                throw CaptureDevice.setupError(device: device, code: applied, details: details,
                                               what: "cannot apply the hardware parameters")
            }
            direction = 0
            _ = snd_pcm_hw_params_get_period_size(params, &period, &direction)
            _ = snd_pcm_hw_params_get_buffer_size(params, &buffer)
            return (UInt32(clamping: period), UInt32(clamping: buffer))
        }
        try configureSoftware(pcm, device: device, periodFrames: granted.0)
        return (period: granted.0, buffer: granted.1)
    }

    /// Wakes `poll` once a whole period is readable.
    private static func configureSoftware(_ pcm: OpaquePointer, device: String, periodFrames: UInt32) throws(ALSAError) {
        var params: OpaquePointer?
        let allocated = snd_pcm_sw_params_malloc(&params)
        guard allocated >= 0, let params else {
            throw .io(device: device, code: allocated, message: alsaMessage(allocated))
        }
        defer { snd_pcm_sw_params_free(params) }
        var result = snd_pcm_sw_params_current(pcm, params)
        if result >= 0 {
            result = snd_pcm_sw_params_set_avail_min(pcm, params, snd_pcm_uframes_t(periodFrames))
        }
        if result >= 0 {
            result = snd_pcm_sw_params(pcm, params)
        }
        if result < 0 {
            throw CaptureDevice.setupError(device: device, code: result, details: [],
                                           what: "cannot apply the software parameters")
        }
    }
}
