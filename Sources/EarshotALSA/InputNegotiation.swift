import CALSA
import Glibc

/// What a capture device grants for a set of hints.
public struct NegotiatedInput: Sendable, Equatable {
    public let sampleRate: UInt32
    public let periodFrames: UInt
    public let channels: UInt32

    public var periodSeconds: Double { Double(periodFrames) / Double(sampleRate) }
}

extension CaptureDevice {
    /// Asks `device` for the nearest it supports to `sampleRate`, `periodSeconds` and
    /// `channels` (16-bit interleaved, no resampling unless the PCM is a `plug`), installs
    /// that configuration to read the granted values back, and closes the device.
    public static func negotiate(_ device: String, sampleRate: UInt32, periodSeconds: Double,
                                 channels: UInt32) throws(ALSAError) -> NegotiatedInput {
        let pcm = try openCapture(device)
        defer { snd_pcm_close(pcm) }
        return try HardwareParameters.withAllocated(device: device) { params throws(ALSAError) in
            func check(_ code: Int32, _ what: String) throws(ALSAError) {
                if code < 0 { throw setupError(device: device, code: code, details: [], what: what) }
            }
            let (result, details) = ALSADiagnostics.collecting { snd_pcm_hw_params_any(pcm, params) }
            if result < 0 {
                throw setupError(device: device, code: result, details: details, what: "cannot read the hardware parameters")
            }
            if snd_pcm_type(pcm) != SND_PCM_TYPE_PLUG { _ = snd_pcm_hw_params_set_rate_resample(pcm, params, 0) }
            try check(snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED), "cannot use interleaved access")
            try check(snd_pcm_hw_params_set_format(pcm, params, SND_PCM_FORMAT_S16_LE), "cannot capture S16_LE")
            var grantedChannels = channels
            try check(snd_pcm_hw_params_set_channels_near(pcm, params, &grantedChannels), "cannot set \(channels) channels")
            var rate = sampleRate
            var direction: Int32 = 0
            try check(snd_pcm_hw_params_set_rate_near(pcm, params, &rate, &direction), "cannot set a rate near \(sampleRate) Hz")
            var periodMicroseconds = UInt32(max(1, min(periodSeconds, 10) * 1_000_000))
            direction = 0
            try check(snd_pcm_hw_params_set_period_time_near(pcm, params, &periodMicroseconds, &direction),
                      "cannot set a period near \(periodSeconds) s")
            // A few periods of buffer, as a capture would use: an unbounded buffer can be
            // millions of frames that installing the configuration silences.
            var periods: UInt32 = 4
            direction = 0
            try check(snd_pcm_hw_params_set_periods_near(pcm, params, &periods, &direction), "cannot set 4 periods")
            let (installed, installDetails) = ALSADiagnostics.collecting { snd_pcm_hw_params(pcm, params) }
            if installed < 0 {
                throw setupError(device: device, code: installed, details: installDetails, what: "cannot install the configuration")
            }
            var frames = snd_pcm_uframes_t(0)
            direction = 0
            _ = snd_pcm_hw_params_get_period_size(params, &frames, &direction)
            direction = 0
            _ = snd_pcm_hw_params_get_rate(params, &rate, &direction)
            _ = snd_pcm_hw_params_get_channels(params, &grantedChannels)
            return NegotiatedInput(sampleRate: rate, periodFrames: UInt(frames), channels: grantedChannels)
        }
    }

    /// The names of `device`'s sub-devices, when it is a kernel device whose driver names
    /// them; empty otherwise.
    public static func subdeviceNames(_ device: String) -> [String] {
        guard let pcm = try? openCapture(device) else { return [] }
        defer { snd_pcm_close(pcm) }
        var info: OpaquePointer?
        guard snd_pcm_info_malloc(&info) >= 0, let info else { return [] }
        defer { snd_pcm_info_free(info) }
        guard snd_pcm_info(pcm, info) >= 0 else { return [] }
        let card = snd_pcm_info_get_card(info)
        guard card >= 0 else { return [] }
        var control: OpaquePointer?
        guard snd_ctl_open(&control, "hw:\(card)", SND_CTL_NONBLOCK) >= 0, let control else { return [] }
        defer { snd_ctl_close(control) }
        let count = snd_pcm_info_get_subdevices_count(info)
        var names: [String] = []
        for index in 0..<count {
            snd_pcm_info_set_subdevice(info, index)
            guard snd_ctl_pcm_info(control, info) >= 0, let name = snd_pcm_info_get_subdevice_name(info) else { continue }
            let text = String(cString: name)
            if !text.isEmpty, !names.contains(text) { names.append(text) }
        }
        return names.count > 1 ? names : []
    }
}
