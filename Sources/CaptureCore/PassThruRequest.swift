import ContractCore

/// A validated PerformAudioPassThru request.
public struct PassThruRequest: Sendable, Equatable {
    public var samplingRate: UInt32
    public var bitsPerSample: UInt32
    public var channels: UInt32 = 1
    public var maxDurationMs: UInt32
    public var muteAudio = true
    public var initialPrompt: [SpeechChunk] = []
    public var displayText1 = ""
    public var displayText2 = ""
    public var chunkMs: UInt32 = 100
    public var endOnSilenceMs: UInt32 = 0
    /// The pass-thru goes on when its owner leaves the bus (scripts whose client exits
    /// right after the call); nobody receives its chunks then, but its result stays readable.
    public var outliveOwner = false
    /// Also write the captured audio to this file, as WAV (for scripts that cannot take
    /// signals or a pipe).
    public var outputPath: String?
    /// How the owner receives the audio.
    public var delivery: Delivery = .signals
    /// How hard road noise is suppressed in what the owner gets.
    public var noiseSuppression: NoiseSuppression = .off
    /// Recording starts with the prompt, not after it, and the prompt's own sound is
    /// cancelled from the audio (only with an `InitialPrompt`).
    public var bargeIn = false
    /// What the speakers play is cancelled from the audio, as the service's echo reference
    /// hears it.
    public var echoCancel = false

    /// `NoiseSuppression`'s levels.
    public enum NoiseSuppression: String, Sendable, Equatable, CaseIterable {
        case off, moderate, high
    }

    /// Whether the captured audio goes through speech processing (echo cancellation, noise
    /// suppression) before anyone gets it; otherwise it is exactly what the device read.
    public var processesSpeech: Bool { noiseSuppression != .off || cancelsEcho }

    /// Whether echo is cancelled: against the prompt as played (`BargeIn`), or against what
    /// the speakers play (`EchoCancel`).
    public var cancelsEcho: Bool { bargesIn || echoCancel }

    /// Whether recording starts with the prompt.
    public var bargesIn: Bool { bargeIn && !initialPrompt.isEmpty }

    /// `Delivery`: chunks as `AudioPassThru` signals, through `OpenStream`'s pipe, or both.
    public enum Delivery: String, Sendable, Equatable, CaseIterable {
        /// A signal per chunk; an `OpenStream` pipe, once opened, carries the same audio.
        case signals
        /// Only the pipe: no `AudioPassThru` signals, so no per-chunk bus traffic.
        case stream
        /// Signals and, once opened, the pipe (as `signals`; named for scripts that want both).
        case both

        /// Whether chunks go out as signals.
        public var sendsSignals: Bool { self != .stream }
    }

    public init(samplingRate: UInt32, bitsPerSample: UInt32, maxDurationMs: UInt32) {
        self.samplingRate = samplingRate
        self.bitsPerSample = bitsPerSample
        self.maxDurationMs = maxDurationMs
    }

    public var bytesPerFrame: Int { Int(channels) * Int(bitsPerSample / 8) }

    /// The frames `MaxDuration` allows: it counts captured frames, whatever the source.
    public var maxFrames: UInt64 { Swift.max(1, UInt64(samplingRate) * UInt64(maxDurationMs) / 1000) }
}

/// The contract's rules for each key of a PerformAudioPassThru request.
public enum PassThruRules {
    public static let samplingRates: [UInt32] = [8000, 16000, 22050, 44100, 48000]
    public static let samplingRateNames: [String: UInt32] = ["8KHZ": 8000, "16KHZ": 16000, "22KHZ": 22050, "44KHZ": 44100]
    public static let bitsPerSampleValues: [UInt32] = [8, 16]
    public static let bitsPerSampleNames: [String: UInt32] = ["8_BIT": 8, "16_BIT": 16]
    public static let maxDurationMs: ClosedRange<UInt32> = 1...1_000_000
    public static let chunkMs: ClosedRange<UInt32> = 10...1000
    public static let endOnSilenceMs: ClosedRange<UInt32> = 0...1_000_000
    public static let audioTypes = ["PCM"]

    public static func samplingRate(_ hz: UInt32) throws(RuleViolation) -> UInt32 {
        guard samplingRates.contains(hz) else {
            throw .invalidData(.samplingRate, "\(hz) Hz is not one of \(samplingRates.map(String.init).joined(separator: ", "))")
        }
        return hz
    }

    public static func samplingRate(named name: String) throws(RuleViolation) -> UInt32 {
        guard let hz = samplingRateNames[name.uppercased()] else {
            throw .invalidData(.samplingRate, "'\(name)' is not one of \(samplingRateNames.keys.sorted().joined(separator: ", "))")
        }
        return hz
    }

    public static func bitsPerSample(_ bits: UInt32) throws(RuleViolation) -> UInt32 {
        guard bitsPerSampleValues.contains(bits) else {
            throw .invalidData(.bitsPerSample, "\(bits) is not 8 or 16")
        }
        return bits
    }

    public static func bitsPerSample(named name: String) throws(RuleViolation) -> UInt32 {
        guard let bits = bitsPerSampleNames[name.uppercased()] else {
            throw .invalidData(.bitsPerSample, "'\(name)' is not 8_BIT or 16_BIT")
        }
        return bits
    }

    public static func audioType(_ type: String) throws(RuleViolation) -> String {
        guard audioTypes.contains(type) else { throw .invalidData(.audioType, "'\(type)' is not PCM") }
        return type
    }

    /// An absolute path to a file (not a directory), at most `PATH_MAX` bytes.
    public static func outputPath(_ path: String) throws(RuleViolation) -> String {
        guard path.hasPrefix("/") else { throw .invalidData(.outputPath, "'\(path)' is not an absolute path") }
        guard !path.hasSuffix("/") else { throw .invalidData(.outputPath, "'\(path)' names a directory, not a file") }
        guard !path.utf8.contains(0) else { throw .invalidData(.outputPath, "the path holds a NUL byte") }
        guard path.utf8.count < 4096 else { throw .invalidData(.outputPath, "\(path.utf8.count) bytes, at most 4095") }
        return path
    }

    public static func delivery(_ name: String) throws(RuleViolation) -> PassThruRequest.Delivery {
        guard let delivery = PassThruRequest.Delivery(rawValue: name) else {
            throw .invalidData(.delivery, "'\(name)' is not one of \(PassThruRequest.Delivery.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return delivery
    }

    public static func noiseSuppression(_ name: String) throws(RuleViolation) -> PassThruRequest.NoiseSuppression {
        guard let level = PassThruRequest.NoiseSuppression(rawValue: name) else {
            throw .invalidData(.noiseSuppression, "'\(name)' is not one of "
                               + PassThruRequest.NoiseSuppression.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return level
    }

    /// The rates speech processing works at: a 10 ms frame is a whole number of samples.
    public static let processingRates: [UInt32] = [8000, 16000, 44100, 48000]

    /// The speech processing a pass-thru at `rate` may ask for on an input of `channels` (0:
    /// one that cannot record), with the processing installed or not, and with an echo
    /// reference or not (`Capabilities`): every `NoiseSuppression` level and `BargeIn` at a
    /// processing rate on a mono input, and `EchoCancel` there too with a reference; else
    /// `off` alone.
    public static func processing(rate: UInt32, channels: UInt32, installed: Bool, echoReference: Bool = false)
        -> (noiseSuppression: [PassThruRequest.NoiseSuppression], bargeIn: Bool, echoCancel: Bool) {
        guard installed, channels == 1, processingRates.contains(rate) else { return ([.off], false, false) }
        return (PassThruRequest.NoiseSuppression.allCases, true, echoReference)
    }

    /// `EchoCancel` needs the service's echo reference (`configured`).
    public static func checkEchoReference(_ request: PassThruRequest, configured: Bool) throws(RuleViolation) {
        guard request.echoCancel, !configured else { return }
        throw RuleViolation(.unsupportedResource, field: .echoCancel,
                            "this service has no echo reference to cancel against (earshot-capture --echo-reference PCM)")
    }

    /// Speech processing works on 10 ms frames: at one of `processingRates`, with chunks a
    /// whole number of them.
    public static func checkProcessing(_ request: PassThruRequest) throws(RuleViolation) {
        guard request.processesSpeech else { return }
        let asked = request.noiseSuppression != .off ? EarshotField.noiseSuppression.name
            : request.bargesIn ? EarshotField.bargeIn.name : EarshotField.echoCancel.name
        guard processingRates.contains(request.samplingRate) else {
            throw .invalidData(.samplingRate, "\(request.samplingRate) Hz cannot be processed (\(asked)): "
                               + "\(processingRates.map(String.init).joined(separator: ", ")) can")
        }
        guard request.chunkMs % 10 == 0 else {
            throw .invalidData(.chunkMs, "\(request.chunkMs) ms is not a multiple of 10 ms, which \(asked) needs")
        }
    }

    public static func displayText(_ text: String, field: String) throws(RuleViolation) -> String {
        try TextRules.check(text, field: field, allowEmpty: true)
        return text
    }

    /// `InitialPrompt` entries, each checked as a speech chunk.
    public static func initialPrompt(_ pairs: [(type: String, text: String)]) throws(RuleViolation) -> [SpeechChunk] {
        try SpeechChunk.parseAll(pairs, field: EarshotField.initialPrompt.name)
    }
}
