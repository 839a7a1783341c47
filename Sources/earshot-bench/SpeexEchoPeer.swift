import CSpeexDSP

/// SpeexDSP's echo canceller with its preprocessor (residual echo and noise suppression),
/// as a peer of WebRTC's on the same sound: 10 ms frames of 16-bit samples, a 300 ms
/// filter (a cabin's delay and its tail). Not used by any service: it lost on the figures
/// (docs/benchmarks.md). With `linearOnly`, the adaptive filter alone: no preprocessor, so
/// nothing is suppressed, the near end's voice least of all.
final class SpeexEchoPeer {
    let frameSize: Int
    private let echo: OpaquePointer?
    private let preprocess: OpaquePointer
    private let linearOnly: Bool

    init(rate: Int, echoCancel: Bool, noiseSuppressionDb: Int32?, linearOnly: Bool = false) {
        self.linearOnly = linearOnly
        frameSize = rate / 100
        var rateValue = Int32(rate)
        if echoCancel {
            echo = speex_echo_state_init(Int32(frameSize), Int32(rate * 300 / 1000))
            speex_echo_ctl(echo, SPEEX_ECHO_SET_SAMPLING_RATE, &rateValue)
        } else {
            echo = nil
        }
        preprocess = speex_preprocess_state_init(Int32(frameSize), Int32(rate))
        var denoise: Int32 = noiseSuppressionDb == nil ? 0 : 1
        speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_DENOISE, &denoise)
        if var level = noiseSuppressionDb { speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, &level) }
        if let echo {
            speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_ECHO_STATE, UnsafeMutableRawPointer(echo))
        }
    }

    deinit {
        if let echo { speex_echo_state_destroy(echo) }
        speex_preprocess_state_destroy(preprocess)
    }

    /// Processes whole frames of `near` in place, paired with `far` (the same length).
    func process(near: inout [Float], far: [Float]) {
        var microphone = [Int16](repeating: 0, count: frameSize), reference = microphone, output = microphone
        for start in stride(from: 0, to: near.count - frameSize + 1, by: frameSize) {
            for index in 0 ..< frameSize {
                microphone[index] = Int16(clamping: Int((near[start + index] * 32767).rounded()))
                reference[index] = start + index < far.count ? Int16(clamping: Int((far[start + index] * 32767).rounded())) : 0
            }
            if let echo {
                speex_echo_cancellation(echo, microphone, reference, &output)
            } else {
                output = microphone
            }
            if !linearOnly { speex_preprocess_run(preprocess, &output) }
            for index in 0 ..< frameSize { near[start + index] = Float(output[index]) / 32768 }
        }
    }
}
