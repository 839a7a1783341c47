import CEbur128
import Glibc

/// EBU R128 integrated loudness (and, on request, true peak) of a stream of frames
/// (libebur128).
struct LoudnessMeter: ~Copyable {
    /// What the meter measures.
    enum Measures {
        /// Integrated loudness.
        case loudness
        /// Integrated loudness and true peak (libebur128's interpolator: several times
        /// slower than the loudness alone; `TruePeakMeter` is the fast true peak).
        case loudnessAndTruePeak
    }

    private let state: UnsafeMutablePointer<ebur128_state>
    private let channels: UInt32

    init(channels: UInt32, sampleRate: UInt32, measuring measures: Measures = .loudness) throws(MediaError) {
        let mode = switch measures {
        case .loudness: EBUR128_MODE_I.rawValue
        case .loudnessAndTruePeak: EBUR128_MODE_I.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue
        }
        guard let state = ebur128_init(channels, UInt(sampleRate), Int32(mode)) else {
            throw .invalidAudio("libebur128 cannot measure \(channels) channels at \(sampleRate) Hz")
        }
        self.state = state
        self.channels = channels
    }

    deinit {
        var state: UnsafeMutablePointer<ebur128_state>? = state
        ebur128_destroy(&state)
    }

    /// Adds `frames` frames of interleaved float samples.
    func add(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(MediaError) {
        guard ebur128_add_frames_float(state, samples.baseAddress, frames) == Int32(EBUR128_SUCCESS.rawValue) else {
            throw .io("libebur128 cannot take more frames (out of memory)")
        }
    }

    /// Integrated loudness in LUFS; -infinity when no gating block is loud enough.
    var integratedLoudness: Double {
        var loudness = -Double.infinity
        guard ebur128_loudness_global(state, &loudness) == Int32(EBUR128_SUCCESS.rawValue) else { return -.infinity }
        return loudness
    }

    /// The highest true peak over the channels, in dBTP; -infinity for silence. Measured
    /// only with `.loudnessAndTruePeak` (-infinity otherwise).
    var truePeakDbtp: Double {
        var highest = 0.0
        for channel in 0 ..< channels {
            var peak = 0.0
            if ebur128_true_peak(state, channel, &peak) == Int32(EBUR128_SUCCESS.rawValue) {
                highest = max(highest, peak)
            }
        }
        return highest > 0 ? 20 * log10(highest) : -.infinity
    }
}
