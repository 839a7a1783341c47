import CSampleRate

/// Why samples could not be resampled.
public struct ResamplingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libsamplerate's message (`src_strerror`), or ours for a bad argument.
    public let message: String

    public var description: String { "resampling failed: \(message)" }
}

/// Sample-rate conversion of mono audio with libsamplerate (`src_simple`, sinc
/// interpolation at medium quality). Stateless; safe to call from any thread at once
/// (each call has its own converter).
public enum Resampler {
    /// The number of frames `count` frames at `from` Hz become at `to` Hz:
    /// `round(count * to / from)`.
    public static func convertedLength(_ count: Int, from: Int, to: Int) -> Int {
        Int((Double(count) * Double(to) / Double(from)).rounded())
    }

    /// Resamples mono float samples (nominally -1...1) from `from` Hz to `to` Hz. The
    /// result has exactly `convertedLength(samples.count, from:, to:)` frames (the
    /// converter's last fraction of a frame is padded with silence or cut).
    public static func resample(_ samples: [Float], from: Int, to: Int) throws(ResamplingError) -> [Float] {
        guard from > 0, to > 0 else { throw ResamplingError(message: "rates must be positive (\(from) → \(to) Hz)") }
        if from == to || samples.isEmpty { return from == to ? samples : [] }
        let ratio = Double(to) / Double(from)
        guard ratio >= 1.0 / 256, ratio <= 256 else {
            throw ResamplingError(message: "ratio \(from) → \(to) Hz is outside libsamplerate's 1/256...256")
        }
        let wanted = convertedLength(samples.count, from: from, to: to)
        var output = [Float](repeating: 0, count: wanted + 64)
        let result = samples.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                var data = SRC_DATA()
                data.data_in = input.baseAddress
                data.input_frames = Int(input.count)
                data.data_out = out.baseAddress
                data.output_frames = Int(out.count)
                data.src_ratio = ratio
                data.end_of_input = 1
                let code = src_simple(&data, Int32(SRC_SINC_MEDIUM_QUALITY), 1)
                return (code, Int(data.output_frames_gen))
            }
        }
        guard result.0 == 0 else {
            throw ResamplingError(message: src_strerror(result.0).map { String(cString: $0) } ?? "error \(result.0)")
        }
        if result.1 >= wanted { return Array(output.prefix(wanted)) }
        return Array(output.prefix(result.1)) + [Float](repeating: 0, count: wanted - result.1)
    }

    /// Resamples mono signed 16-bit samples; see `resample(_:from:to:)` for floats.
    public static func resample(_ samples: [Int16], from: Int, to: Int) throws(ResamplingError) -> [Int16] {
        if from == to { return samples }
        let converted = try resample(samples.map { Float($0) / 32768 }, from: from, to: to)
        return converted.map(sampleFromFloat)
    }

    /// A float sample (-1...1) as a signed 16-bit sample, clipped.
    static func sampleFromFloat(_ value: Float) -> Int16 {
        let scaled = (value * 32768).rounded()
        return Int16(max(-32768, min(32767, scaled)))
    }
}

/// Sample-rate conversion of one continuous mono stream given in pieces (libsamplerate's
/// `src_process`, sinc interpolation): the converter keeps its state between pieces, so
/// the pieces join without a seam. One stream, one thread at a time.
public final class StreamingResampler {
    /// libsamplerate's sinc converters used here.
    public enum Quality: Sendable {
        /// `SRC_SINC_MEDIUM_QUALITY`: 90 % of the band kept.
        case medium
        /// `SRC_SINC_FASTEST`: 80 % of the band, about a third of medium's CPU; enough for
        /// an echo canceller's reference (a pass-thru's prompt at 22.05 kHz to 16 kHz took
        /// 7 of capture's 22 ms of CPU a second of audio at medium).
        case fastest

        var converter: Int32 { Int32(self == .medium ? SRC_SINC_MEDIUM_QUALITY : SRC_SINC_FASTEST) }
    }

    public let from: Int
    public let to: Int
    private let state: OpaquePointer?
    private var ended = false

    public init(from: Int, to: Int, quality: Quality = .medium) throws(ResamplingError) {
        guard from > 0, to > 0 else { throw ResamplingError(message: "rates must be positive (\(from) → \(to) Hz)") }
        let ratio = Double(to) / Double(from)
        guard ratio >= 1.0 / 256, ratio <= 256 else {
            throw ResamplingError(message: "ratio \(from) → \(to) Hz is outside libsamplerate's 1/256...256")
        }
        self.from = from
        self.to = to
        if from == to {
            state = nil
            return
        }
        var error: Int32 = 0
        guard let made = src_new(quality.converter, 1, &error) else {
            throw ResamplingError(message: src_strerror(error).map { String(cString: $0) } ?? "error \(error)")
        }
        state = made
    }

    deinit { if let state { src_delete(state) } }

    /// The next piece of the stream at `to` Hz; `last` flushes what the converter holds
    /// back (after it, nothing more is taken).
    public func process(_ samples: [Float], last: Bool = false) throws(ResamplingError) -> [Float] {
        guard !ended else { return [] }
        if last { ended = true }
        guard let state else { return samples }
        let ratio = Double(to) / Double(from)
        var output: [Float] = []
        var input = samples[...]
        var buffer = [Float](repeating: 0, count: Int(Double(max(samples.count, 256)) * ratio) + 256)
        while true {
            let (code, used, made) = input.withUnsafeBufferPointer { inPointer in
                buffer.withUnsafeMutableBufferPointer { out -> (Int32, Int, Int) in
                    var data = SRC_DATA()
                    data.data_in = inPointer.baseAddress
                    data.input_frames = inPointer.count
                    data.data_out = out.baseAddress
                    data.output_frames = out.count
                    data.src_ratio = ratio
                    data.end_of_input = last ? 1 : 0
                    let code = src_process(state, &data)
                    return (code, Int(data.input_frames_used), Int(data.output_frames_gen))
                }
            }
            guard code == 0 else {
                throw ResamplingError(message: src_strerror(code).map { String(cString: $0) } ?? "error \(code)")
            }
            output += buffer[0 ..< made]
            input = input.dropFirst(used)
            // Done when all input is taken and, at the end, nothing more comes out.
            if input.isEmpty && (!last || made == 0) { break }
            if used == 0 && made == 0 { break }
        }
        return output
    }
}
