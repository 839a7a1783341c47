import ContractCore
import EarshotSync

/// Why one part of an alert's audio could not be rendered.
public enum AlertAudioError: Error, Sendable, Equatable, CustomStringConvertible {
    /// espeak-ng failed on a TEXT or phoneme chunk.
    case speech(SpeechError)
    /// A SAPI_PHONEMES or LHPLUS_PHONEMES chunk holds a symbol the tables do not know.
    case phonemes(UnknownPhonemeError)
    /// A FILE chunk's file is missing or unreadable; the alert service turns this into a
    /// warning or `FILE_NOT_FOUND`.
    case file(AudioFileError)
    /// A PRE_RECORDED chunk names no known jingle.
    case unknownJingle(String)
    /// Speech could not be converted to the output rate.
    case resampling(String)

    public var description: String {
        switch self {
        case .speech(let error): error.description
        case .phonemes(let error): error.description
        case .file(let error): error.description
        case .unknownJingle(let name): "'\(name)' is not a known jingle"
        case .resampling(let message): "speech cannot be resampled: \(message)"
        }
    }
}

/// One piece of an alert's audio, in playing order.
public enum AlertAudioPart: Sendable, Equatable {
    /// The `PlayTone` chime.
    case tone
    /// One of the alert's chunks.
    case chunk(SpeechChunk)
}

/// Turns an alert's audio (optional tone, then `SpeechChunk`s) into mono signed 16-bit PCM
/// at `sampleRate`, one segment per part, so that playback can start on the first segment
/// while later ones are still being rendered:
///
///     for part in AlertAudioRenderer.parts(of: chunks, playTone: true) {
///         stream.enqueue(try renderer.render(part))
///     }
///
/// - TEXT: spoken by espeak-ng; SAPI_PHONEMES / LHPLUS_PHONEMES: converted by
///   `PhonemeTranslation`, then spoken; speech is resampled from the engine's rate when it
///   differs from `sampleRate`.
/// - PRE_RECORDED: the named `Jingle`, synthesized at `sampleRate`.
/// - SILENCE: the text as a number of milliseconds (non-numeric or negative text: 500 ms;
///   at most 60 000 ms); exactly `round(ms * sampleRate / 1000)` zero frames.
/// - FILE: decoded by `AudioFileDecoder`; a missing or unreadable file is `.file(…)`.
///
/// Thread safety: immutable; any number of threads may render at once (speech synthesis
/// is serialized inside `SpeechSynthesizer`).
public final class AlertAudioRenderer: Sendable {
    /// The rate of every rendered segment, in Hz.
    public let sampleRate: Int
    /// The speech engine for TEXT and phoneme chunks: the one given, or a default en-us
    /// one made when speech is first needed (libespeak-ng is opened then, not before).
    private let speech: Locked<SpeechSynthesizer?>

    /// A SILENCE chunk without a usable number lasts this long.
    public static let defaultSilenceMilliseconds = 500.0
    /// The longest SILENCE chunk rendered; longer requests are cut to this.
    public static let maximumSilenceMilliseconds = 60_000.0

    /// A renderer producing `sampleRate` Hz, speaking with `synthesizer` (when nil, a
    /// default en-us one made at the first speech chunk).
    public init(sampleRate: Int = 22050, synthesizer: SpeechSynthesizer? = nil) {
        precondition(sampleRate > 0, "sample rate must be positive")
        self.sampleRate = sampleRate
        speech = Locked(synthesizer)
    }

    /// The speech engine, made now if there is none yet. A failure (no libespeak-ng, no
    /// voice data) is thrown, and tried again at the next call.
    public func synthesizer() throws(SpeechError) -> SpeechSynthesizer {
        try speech.withLock { (current: inout SpeechSynthesizer?) throws(SpeechError) -> SpeechSynthesizer in
            if let current { return current }
            let made = try SpeechSynthesizer()
            current = made
            return made
        }
    }

    /// The parts to render for an alert: the tone first when `playTone` and there is audio
    /// at all, then every chunk in order.
    public static func parts(of chunks: [SpeechChunk], playTone: Bool) -> [AlertAudioPart] {
        guard !chunks.isEmpty else { return [] }
        return (playTone ? [.tone] : []) + chunks.map { .chunk($0) }
    }

    /// Renders one part (FILE chunks from `files` as `render(_:files:)` says).
    public func render(_ part: AlertAudioPart, files: [String: Int32] = [:]) throws(AlertAudioError) -> [Int16] {
        switch part {
        case .tone: Tone.render(sampleRate: sampleRate)
        case .chunk(let chunk): try render(chunk, files: files)
        }
    }

    /// Renders one chunk; a FILE chunk is read from `files[chunk.text]` when the caller
    /// opened it (with its own rights), else from its path.
    public func render(_ chunk: SpeechChunk, files: [String: Int32] = [:]) throws(AlertAudioError) -> [Int16] {
        switch chunk.kind {
        case .text:
            return try speak(chunk.text, phonemes: false)
        case .sapiPhonemes:
            let mnemonics: String
            do {
                mnemonics = try PhonemeTranslation.espeakFromSAPI(chunk.text)
            } catch {
                throw .phonemes(error)
            }
            return try speak(mnemonics, phonemes: true)
        case .lhplusPhonemes:
            let mnemonics: String
            do {
                mnemonics = try PhonemeTranslation.espeakFromLHPlus(chunk.text)
            } catch {
                throw .phonemes(error)
            }
            return try speak(mnemonics, phonemes: true)
        case .preRecorded:
            guard let jingle = Jingle(name: chunk.text) else { throw .unknownJingle(chunk.text) }
            return jingle.render(sampleRate: sampleRate)
        case .silence:
            return [Int16](repeating: 0, count: silenceFrames(chunk.text))
        case .file:
            do {
                return try AudioFileDecoder.decode(path: chunk.text, fd: files[chunk.text], sampleRate: sampleRate)
            } catch {
                throw .file(error)
            }
        }
    }

    /// Renders a whole alert's audio at once, one segment per part. With
    /// `skippingUnreadableFiles`, a FILE chunk that cannot be read is left out and
    /// reported in `skipped`; otherwise it ends rendering with `.file(…)`.
    public func renderAll(_ chunks: [SpeechChunk], playTone: Bool, skippingUnreadableFiles: Bool)
        throws(AlertAudioError) -> (segments: [[Int16]], skipped: [AudioFileError]) {
        var segments: [[Int16]] = []
        var skipped: [AudioFileError] = []
        for part in Self.parts(of: chunks, playTone: playTone) {
            do {
                segments.append(try render(part))
            } catch .file(let error) where skippingUnreadableFiles {
                skipped.append(error)
            }
        }
        return (segments, skipped)
    }

    /// Frames of a SILENCE chunk with `text`.
    public func silenceFrames(_ text: String) -> Int {
        var milliseconds = Self.defaultSilenceMilliseconds
        if let number = Double(String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())), number.isFinite, number >= 0 {
            milliseconds = min(number, Self.maximumSilenceMilliseconds)
        }
        return Int((milliseconds * Double(sampleRate) / 1000).rounded())
    }

    private func speak(_ text: String, phonemes: Bool) throws(AlertAudioError) -> [Int16] {
        let samples: [Int16]
        let synthesizer: SpeechSynthesizer
        do {
            synthesizer = try self.synthesizer()
            samples = try synthesizer.synthesize(text: text, phonemes: phonemes)
        } catch {
            throw .speech(error)
        }
        do {
            return try Resampler.resample(samples, from: synthesizer.sampleRate, to: sampleRate)
        } catch {
            throw .resampling(error.message)
        }
    }
}
