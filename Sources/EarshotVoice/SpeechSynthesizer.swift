import CEspeakNG
import EarshotSync
import Glibc

/// Why speech could not be synthesized.
public enum SpeechError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libespeak-ng could not be opened, or `espeak_Initialize` failed (no espeak-ng data,
    /// for instance).
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

/// Speech from libespeak-ng, synthesized in this process into mono signed 16-bit samples at
/// the engine's native rate (`sampleRate`, 22050 Hz for espeak-ng).
///
/// Thread safety: libespeak-ng keeps all its state in globals (one voice, one set of
/// parameters, one synth callback), so every call into it, from every `SpeechSynthesizer`
/// in the process, goes through `EspeakEngine.shared`, which holds one lock across
/// initialization, voice selection and a whole synthesis. Any number of threads may call
/// `synthesize` at once; the calls run one after the other. The engine is initialized in
/// `AUDIO_OUTPUT_SYNCHRONOUS` mode, so `espeak_Synth` calls the synth callback on the
/// calling thread, while the lock is held, and returns only when all samples are out.
public final class SpeechSynthesizer: Sendable {
    /// The espeak-ng voice, e.g. "en-us".
    public let voice: String
    /// Speaking rate in words per minute (espeak-ng's `espeakRATE`, 80...450).
    public let wordsPerMinute: Int32
    /// The rate of the samples `synthesize` returns, in Hz.
    public let sampleRate: Int

    /// Initializes libespeak-ng if this is the first synthesizer of the process and checks
    /// that `voice` exists.
    public init(voice: String = "en-us", wordsPerMinute: Int32 = 175) throws(SpeechError) {
        self.voice = voice
        self.wordsPerMinute = min(450, max(80, wordsPerMinute))
        sampleRate = try EspeakEngine.shared.prepare(voice: voice)
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
        return try EspeakEngine.shared.synthesize(input, voice: voice, wordsPerMinute: wordsPerMinute,
                                                  phonemeInput: phonemes)
    }

    /// Lets libespeak-ng go: after a synthesis under way, it is terminated (its phoneme
    /// tables, dictionary and voice freed) and closed (unmapped with the libraries it
    /// brought). The next synthesis opens and initializes it again, a few tens of
    /// milliseconds. For a service that has gone quiet.
    public static func releaseEngine() {
        EspeakEngine.shared.release()
    }
}

/// The process's one libespeak-ng engine, behind one lock.
final class EspeakEngine: @unchecked Sendable {
    // @unchecked Sendable: `sampleRate` and `currentVoice` are read and written only inside
    // `lock.withLock`, and libespeak-ng itself is only called there.
    static let shared = EspeakEngine()

    private let lock = ThreadLock()
    /// libespeak-ng's entry points once the library is open.
    private var api: earshot_espeak?
    /// The rate `espeak_Initialize` returned; nil until it succeeded.
    private var sampleRate: Int?
    /// The voice last selected with `espeak_SetVoiceByName`.
    private var currentVoice: String?

    /// Initializes the engine once and selects `voice`; returns the engine's sample rate.
    func prepare(voice: String) throws(SpeechError) -> Int {
        try lock.withLock { () throws(SpeechError) -> Int in
            let rate = try initializeLocked()
            try selectLocked(voice)
            return rate
        }
    }

    func synthesize(_ input: String, voice: String, wordsPerMinute: Int32, phonemeInput: Bool) throws(SpeechError) -> [Int16] {
        try lock.withLock { () throws(SpeechError) -> [Int16] in
            _ = try initializeLocked()
            try selectLocked(voice)
            guard let api else { throw .engineUnavailable("libespeak-ng is not open") }
            _ = api.setParameter!(espeakRATE, wordsPerMinute, 0)
            let sink = SampleSink()
            var flags = UInt32(espeakCHARS_UTF8)
            if phonemeInput { flags |= UInt32(espeakPHONEMES) }
            let result = withExtendedLifetime(sink) {
                input.withCString { text in
                    api.synth!(text, strlen(text) + 1, 0, POS_CHARACTER, 0, flags, nil,
                              Unmanaged.passUnretained(sink).toOpaque())
                }
            }
            guard result == EE_OK else { throw .synthesisFailed(code: Int32(result.rawValue)) }
            return sink.samples
        }
    }

    /// Opens libespeak-ng (the first time) and initializes it (until that succeeds once).
    private func initializeLocked() throws(SpeechError) -> Int {
        if let sampleRate { return sampleRate }
        if api == nil {
            var opened = earshot_espeak()
            if let failure = earshot_espeak_open(&opened) { throw .engineUnavailable(String(cString: failure)) }
            api = opened
        }
        guard let api else { throw .engineUnavailable("libespeak-ng is not open") }
        // The entry points are never nil here: earshot_espeak_open checked each one.
        let rate = api.initialize!(AUDIO_OUTPUT_SYNCHRONOUS, 0, nil, Int32(espeakINITIALIZE_DONT_EXIT))
        guard rate > 0 else { throw .engineUnavailable("espeak_Initialize returned \(rate)") }
        api.setSynthCallback!(collectSamples)
        sampleRate = Int(rate)
        return Int(rate)
    }

    /// Terminates and closes the library, if open; `initializeLocked` starts afresh.
    func release() {
        lock.withLock {
            guard var opened = api else { return }
            if sampleRate != nil { _ = opened.terminate!() }
            earshot_espeak_close(&opened)
            api = nil
            sampleRate = nil
            currentVoice = nil
        }
    }

    private func selectLocked(_ voice: String) throws(SpeechError) {
        if currentVoice == voice { return }
        guard let api, api.setVoiceByName!(voice) == EE_OK else { throw .unknownVoice(voice) }
        currentVoice = voice
    }
}

/// Where the synth callback of one `espeak_Synth` call puts its samples. Reached from the C
/// callback through the events' `user_data`; only touched on the synthesizing thread.
private final class SampleSink {
    var samples: [Int16] = []
}

/// libespeak-ng's synth callback: appends `count` samples to the `SampleSink` named by the
/// events' `user_data`. Returns 0 to go on.
private func collectSamples(_ wav: UnsafeMutablePointer<Int16>?, _ count: Int32,
                            _ events: UnsafeMutablePointer<espeak_EVENT>?) -> Int32 {
    guard let wav, count > 0, let raw = events?.pointee.user_data else { return 0 }
    let sink = Unmanaged<SampleSink>.fromOpaque(raw).takeUnretainedValue()
    sink.samples.append(contentsOf: UnsafeBufferPointer(start: wav, count: Int(count)))
    return 0
}
