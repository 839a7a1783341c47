import CSpeexDSP
import Glibc

/// Decides, frame by frame, whether mono 16-bit audio holds speech.
public protocol VoiceActivityDetector: Sendable {
    /// Samples per analysis frame.
    var frameSamples: Int { get }
    mutating func isSpeech(_ frame: [Int16]) -> Bool
}

/// SpeexDSP's preprocessor voice-activity detection (`speex_preprocess_run` with
/// `SPEEX_PREPROCESS_SET_VAD`), on 20 ms frames.
public final class SpeexVoiceDetector: VoiceActivityDetector, @unchecked Sendable {
    // @unchecked Sendable: the SpeexPreprocessState is touched only by isSpeech and
    // deinit; its owner (a PassThru) is mutated by one thread at a time, under the
    // capture service's lock.
    private let state: OpaquePointer
    public let frameSamples: Int

    public init(sampleRate: UInt32) {
        frameSamples = Int(sampleRate) / 50
        state = speex_preprocess_state_init(Int32(frameSamples), Int32(sampleRate))
        var on: Int32 = 1
        _ = speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_VAD, &on)
    }

    deinit { speex_preprocess_state_destroy(state) }

    public func isSpeech(_ frame: [Int16]) -> Bool {
        var samples = frame
        return samples.withUnsafeMutableBufferPointer { speex_preprocess_run(state, $0.baseAddress) } != 0
    }
}

/// An adaptive energy detector with a modulation check.
///
/// Levels are taken above `highPassHz` (a second-order Butterworth high-pass that runs on
/// across frames): a car's road rumble, most of its noise, lies below it, and its slow
/// swings would otherwise stand above the floor as syllables do; speech keeps its
/// harmonics and formants, which lie above.
///
/// A frame is speech when (1) its level stands `margin` dB above the noise floor and
/// above `absoluteFloor`, and (2) the loud frames of the last 300 ms differ by at least
/// `modulation` dB: speech rises and falls syllable by syllable, while a fan, an engine
/// or a room that just got louder is steady. The floor is the lowest frame level of the
/// last `windowMs` (minimum statistics, clamped at -90 dBFS), so it follows the room's
/// noise as it rises or falls, and the pauses between words keep it below speech.
public struct EnergyVoiceDetector: VoiceActivityDetector {
    public let frameSamples: Int
    public var margin: Double = 12
    public var absoluteFloor: Double = -60
    public var modulation: Double = 6
    private var levels: [Double]
    private var next = 0
    private var filled = 0
    /// Levels of the last 15 frames (300 ms) that stood above the threshold, else nil.
    private var recentLoud: [Double?] = Array(repeating: nil, count: 15)
    private var recentNext = 0

    /// The high-pass's corner.
    public static let highPassHz = 150.0
    private var highPass: HighPass

    public init(sampleRate: UInt32, windowMs: Int = 2000) {
        frameSamples = Int(sampleRate) / 50
        levels = [Double](repeating: 0, count: Swift.max(1, windowMs / 20))
        highPass = HighPass(cornerHz: Self.highPassHz, sampleRate: Double(sampleRate))
    }

    /// The frame's RMS level in dBFS.
    public static func level(_ frame: [Int16]) -> Double {
        var sum = 0.0
        for sample in frame { sum += Double(sample) * Double(sample) }
        let rms = (sum / Double(Swift.max(1, frame.count))).squareRoot()
        return Swift.max(-90, 20 * log10(rms / 32768 + 1e-10))
    }

    public mutating func isSpeech(_ frame: [Int16]) -> Bool {
        guard !frame.isEmpty else { return false }
        let level = Self.level(highPass.filtered(frame))
        levels[next] = level
        next = (next + 1) % levels.count
        filled = Swift.min(filled + 1, levels.count)
        let floor = levels[..<filled].min() ?? level
        let loud = level > Swift.max(floor + margin, absoluteFloor)
        recentLoud[recentNext] = loud ? level : nil
        recentNext = (recentNext + 1) % recentLoud.count
        guard loud else { return false }
        let loudLevels = recentLoud.compactMap { $0 }
        guard let high = loudLevels.max(), let low = loudLevels.min() else { return false }
        return high - low >= modulation
    }
}

/// A second-order Butterworth high-pass (the audio EQ cookbook's biquad), its state kept
/// from one frame to the next.
struct HighPass: Sendable {
    private let b0, b1, b2, a1, a2: Double
    private var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0

    init(cornerHz: Double, sampleRate: Double) {
        let w0 = 2 * Double.pi * Swift.min(cornerHz, sampleRate * 0.45) / sampleRate
        let alpha = sin(w0) / (2 * 0.5.squareRoot())
        let a0 = 1 + alpha
        b0 = (1 + cos(w0)) / 2 / a0
        b1 = -(1 + cos(w0)) / a0
        b2 = b0
        a1 = -2 * cos(w0) / a0
        a2 = (1 - alpha) / a0
    }

    /// `frame` through the filter, as 16-bit samples.
    mutating func filtered(_ frame: [Int16]) -> [Int16] {
        frame.map { sample in
            let x = Double(sample)
            let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            (x2, x1, y2, y1) = (x1, x, y1, y)
            return Int16(clamping: Int(y.rounded()))
        }
    }
}
