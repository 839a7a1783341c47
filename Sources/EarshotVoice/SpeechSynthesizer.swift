import EarshotSync

/// Why speech could not be synthesized.
public enum SpeechError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The speech helper could not be started or stopped answering, or libespeak-ng could
    /// not be initialized in it (no espeak-ng data, for instance).
    case engineUnavailable(String)
    /// espeak-ng has no voice by this name.
    case unknownVoice(String)
    /// Phoneme input that cannot be handed to espeak-ng (it would close the `[[ ]]` block).
    case invalidPhonemes(String)
    /// `espeak_Synth` returned this `espeak_ERROR` code.
    case synthesisFailed(code: Int32)

    public var description: String {
        switch self {
        case .engineUnavailable(let why): "espeak-ng is unavailable: \(why)"
        case .unknownVoice(let name): "espeak-ng has no voice '\(name)'"
        case .invalidPhonemes(let why): "invalid phoneme input: \(why)"
        case .synthesisFailed(let code): "espeak-ng synthesis failed (espeak_ERROR \(code))"
        }
    }
}

/// Speech from libespeak-ng into mono signed 16-bit samples at the engine's native rate
/// (`sampleRate`, 22050 Hz for espeak-ng), synthesized in the helper process
/// `earshot-speak` (`SpeechEngine`), never in this one.
///
/// Thread safety: every `SpeechSynthesizer` of the process goes through
/// `SpeechEngine.shared`, which holds one lock across a whole request to the one helper
/// and its reply. Any number of threads may call `synthesize` at once; the calls run one
/// after the other, each blocking its thread until all samples are back.
public final class SpeechSynthesizer: Sendable {
    /// The espeak-ng voice, e.g. "en-us".
    public let voice: String
    /// Speaking rate in words per minute (espeak-ng's `espeakRATE`, 80...450).
    public let wordsPerMinute: Int32
    /// The rate of the samples `synthesize` returns, in Hz.
    public let sampleRate: Int

    /// Starts the speech helper if none runs and checks that `voice` exists.
    public init(voice: String = "en-us", wordsPerMinute: Int32 = 175) throws(SpeechError) {
        self.voice = voice
        self.wordsPerMinute = min(450, max(80, wordsPerMinute))
        sampleRate = try SpeechEngine.shared.prepare(voice: voice)
    }

    /// Synthesizes `text`. With `phonemes` false it is read as plain UTF-8 text (no SSML,
    /// and `[[ ]]` in it is not phoneme input). With `phonemes` true it is a sequence of
    /// espeak-ng phoneme mnemonics (as `espeak-ng -x` prints them, e.g. `h@l'oU w'3:ld`),
    /// spoken as one `[[ ]]` block. Returns the mono samples at `sampleRate`; empty text
    /// gives no samples.
    public func synthesize(text: String, phonemes: Bool) throws(SpeechError) -> [Int16] {
        let input: String
        if phonemes {
            guard !text.contains("]]") else { throw .invalidPhonemes("']]' inside phoneme input") }
            input = "[[" + text + "]]"
        } else {
            input = text
        }
        if text.allSatisfy(\.isWhitespace) { return [] }
        return try SpeechEngine.shared.synthesize(input, voice: voice, wordsPerMinute: wordsPerMinute,
                                                  phonemeInput: phonemes).samples
    }

    /// Lets libespeak-ng go: after a synthesis under way, the speech helper is ended, and
    /// its memory and the libraries it loaded with it. The next synthesis starts it again,
    /// a few tens of milliseconds. For a service that has gone quiet.
    public static func releaseEngine() {
        SpeechEngine.shared.release()
    }

    /// The process id of the speech helper that runs now, if one does (for tests and
    /// measurements).
    public static var engineProcessID: Int32? { SpeechEngine.shared.helperProcessID }
}
