import CALSA
import Glibc

/// Questions about a capture device that need no stream.
public enum CaptureDevice {
    /// The sample rates `probe` tests, ascending.
    public static let candidateSampleRates: [UInt32] = [8000, 16000, 22050, 44100, 48000]

    /// Probes `device` for capture: opens it (non-blocking), tests each candidate rate,
    /// sample format and the channel range on a fresh `snd_pcm_hw_params_any` each time
    /// (with rate resampling disabled unless the PCM is a `plug`, as `CaptureStream` does),
    /// and closes it.
    public static func probe(_ device: String) throws(ALSAError) -> CaptureCapabilities {
        let pcm = try openCapture(device)
        defer { snd_pcm_close(pcm) }
        return try HardwareParameters.withAllocated(device: device) { params throws(ALSAError) in
            let plug = snd_pcm_type(pcm) == SND_PCM_TYPE_PLUG
            func fresh() throws(ALSAError) {
                let (result, details) = ALSADiagnostics.collecting { snd_pcm_hw_params_any(pcm, params) }
                if result < 0 {
                    throw setupError(device: device, code: result, details: details,
                                     what: "cannot read the hardware parameters")
                }
                if !plug { _ = snd_pcm_hw_params_set_rate_resample(pcm, params, 0) }
            }
            var rates: [UInt32] = []
            for rate in candidateSampleRates {
                try fresh()
                if snd_pcm_hw_params_test_rate(pcm, params, rate, 0) == 0 { rates.append(rate) }
            }
            var widths: [UInt32] = []
            for bits in PCMFormat.supportedBitsPerSample {
                try fresh()
                if let format = PCMFormat.sampleFormat(bits: bits),
                   snd_pcm_hw_params_test_format(pcm, params, format) == 0 {
                    widths.append(bits)
                }
            }
            try fresh()
            let channels = HardwareParameters.channelRange(params)
            return CaptureCapabilities(sampleRates: rates, bitsPerSample: widths, channels: channels)
        }
    }

    /// Whether `device` exists but cannot be opened now because another user has it open
    /// (`-EBUSY`), e.g. a pass-thru recording from it.
    public static func isBusy(_ device: String) -> Bool {
        var handle: OpaquePointer?
        let result = snd_pcm_open(&handle, device, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)
        if result >= 0, let handle { snd_pcm_close(handle) }
        return result == -EBUSY
    }

    /// Opens `device` for capture in non-blocking mode; a failure is `.cannotOpen` quoting
    /// libasound's own messages.
    static func openCapture(_ device: String) throws(ALSAError) -> OpaquePointer {
        try PCMSetup<ALSACapture>.open(device, stream: SND_PCM_STREAM_CAPTURE)
    }

    static func setupError(device: String, code: Int32, details: [String], what: String) -> ALSAError {
        PCMSetup<ALSACapture>.setupError(device: device, code: code, details: details, what: what)
    }
}

/// Helpers around `snd_pcm_hw_params_t`, which Swift can only hold through libasound's
/// malloc/free functions (the `alloca` macros do not import).
enum HardwareParameters {
    static func withAllocated<Result>(
        device: String, _ body: (OpaquePointer) throws(ALSAError) -> Result
    ) throws(ALSAError) -> Result {
        var params: OpaquePointer?
        let result = snd_pcm_hw_params_malloc(&params)
        guard result >= 0, let params else {
            throw .io(device: device, code: result, message: alsaMessage(result))
        }
        defer { snd_pcm_hw_params_free(params) }
        return try body(params)
    }

    static func channelRange(_ params: OpaquePointer) -> ClosedRange<UInt32> {
        var low: UInt32 = 0
        var high: UInt32 = 0
        _ = snd_pcm_hw_params_get_channels_min(params, &low)
        _ = snd_pcm_hw_params_get_channels_max(params, &high)
        return low...max(low, high)
    }

    static func rateRange(_ params: OpaquePointer) -> ClosedRange<UInt32> {
        var low: UInt32 = 0
        var high: UInt32 = 0
        var direction: Int32 = 0
        // A direction says the bound is open: the true minimum is above, the maximum below.
        _ = snd_pcm_hw_params_get_rate_min(params, &low, &direction)
        if direction > 0, low < UInt32.max { low += 1 }
        direction = 0
        _ = snd_pcm_hw_params_get_rate_max(params, &high, &direction)
        if direction < 0, high > 0 { high -= 1 }
        return low...max(low, high)
    }

    /// Which of the handled sample widths `params` still allows, e.g. "U8, S16_LE".
    static func offeredFormats(_ pcm: OpaquePointer, _ params: OpaquePointer) -> String {
        let names = PCMFormat.supportedBitsPerSample.compactMap { bits -> String? in
            guard let format = PCMFormat.sampleFormat(bits: bits),
                  snd_pcm_hw_params_test_format(pcm, params, format) == 0 else { return nil }
            return PCMFormat.formatName(bits: bits)
        }
        return names.isEmpty ? "neither U8 nor S16_LE" : names.joined(separator: ", ")
    }
}
