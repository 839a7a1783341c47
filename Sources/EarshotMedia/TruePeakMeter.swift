import CTruePeak
import Glibc

/// The true peak (BS.1770-4) of a stream of frames, oversampled by a polyphase
/// Kaiser-windowed sinc interpolator (`true_peak.c` in CTruePeak): 4× below 96 kHz, 2×
/// below 192 kHz, the sample peak from 192 kHz up, as libebur128 does.
struct TruePeakMeter: ~Copyable {
    private let state: OpaquePointer

    init(channels: UInt32, sampleRate: UInt32) throws(MediaError) {
        var state: OpaquePointer?
        let (status, text) = Self.call { message, size in
            earshot_true_peak_create(&state, Int32(clamping: channels), Int32(clamping: sampleRate), message, size)
        }
        guard status == EARSHOT_TRUE_PEAK_OK, let state else {
            if status == EARSHOT_TRUE_PEAK_INVALID {
                throw .invalidAudio("cannot measure the true peak of \(channels) channels at \(sampleRate) Hz (\(text))")
            }
            throw .io("cannot measure the true peak: \(text)")
        }
        self.state = state
    }

    deinit {
        earshot_true_peak_destroy(state)
    }

    /// Adds `frames` frames of interleaved float samples.
    func add(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(MediaError) {
        let (status, text) = Self.call { message, size in
            earshot_true_peak_add_frames_float(state, samples.baseAddress, frames, message, size)
        }
        guard status == EARSHOT_TRUE_PEAK_OK else { throw .io("cannot measure the true peak: \(text)") }
    }

    /// Lets the interpolator ring out after the last frame; call once, after the last `add`.
    func finish() throws(MediaError) {
        let (status, text) = Self.call { message, size in earshot_true_peak_finish(state, message, size) }
        guard status == EARSHOT_TRUE_PEAK_OK else { throw .io("cannot measure the true peak: \(text)") }
    }

    /// The highest true peak over the channels, in dBTP; -infinity for silence.
    var truePeakDbtp: Double {
        let highest = earshot_true_peak_max(state)
        return highest > 0 ? 20 * log10(highest) : -.infinity
    }

    /// Runs `body` with a message buffer (pointer, size) and returns its status and message.
    private static func call(
        _ body: (UnsafeMutablePointer<CChar>, Int) -> earshot_true_peak_status
    ) -> (earshot_true_peak_status, String) {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { message in
            message[0] = 0
            let status = body(message.baseAddress!, message.count)
            message[message.count - 1] = 0
            return (status, status == EARSHOT_TRUE_PEAK_OK ? "" : String(cString: message.baseAddress!))
        }
    }
}
