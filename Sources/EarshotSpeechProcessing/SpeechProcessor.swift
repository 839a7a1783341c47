import EarshotSync

/// Echo cancellation and noise suppression for one microphone stream, by WebRTC's audio
/// processing module in the plugin `libEarshotSpeechProcessing.so` (Sources/Plugins),
/// loaded at the first processor made.
///
/// Audio goes through in 10 ms frames (`frameSize` samples, mono). What the speakers play
/// (the far end) is given with `play`, from the moment it starts playing, as one
/// continuous signal; the microphone's samples go through `process`. The far end reaches
/// the microphone later than given (the output's buffer, the flight through the cabin):
/// `EchoDelayEstimator` measures that delay from the two signals (the last 750 ms), at
/// first over up to a second, every quarter second until found, and then, every two
/// seconds, 50 ms either side of the last, and the far end is
/// handed to the canceller that much later, less `margin` (the canceller finds a short
/// delay itself). A processor may start from the delay measured on the same path before
/// (`startingDelay`): the far end is then handed over in step from the first frame, while
/// the delay is measured afresh as above and followed once found. One processor is used by
/// one thread at a time (capture's reading thread): it is not Sendable.
public final class SpeechProcessor {
    /// How hard noise is suppressed (the plugin's `earshot_noise_suppression`).
    public enum Noise: Int32, Sendable, CaseIterable {
        case off = 0
        case moderate = 1
        case high = 2
    }

    public static let fileName = "libEarshotSpeechProcessing.so"
    static let feature = "Speech processing"

    /// Whether the plugin is there to be loaded (looked for, not loaded).
    public static func isInstalled(in directories: [String] = PluginLibrary.searchDirectories) -> Bool {
        PluginLibrary.locate(fileName, in: directories) != nil
    }

    /// The rates the module processes: a 10 ms frame is a whole number of samples.
    public static let rates = [8000, 16000, 32000, 44100, 48000]

    public let rate: Int
    /// Samples per 10 ms frame.
    public let frameSize: Int
    private let entries: Entries
    private var processor: OpaquePointer
    private let echoCancel: Bool
    private let noise: Noise
    /// The far end given, from `farDropped` on; its sample 0 started playing with the
    /// microphone's sample `farOrigin`.
    private var far: [Float] = []
    private var farDropped = 0
    private var farOrigin: Int?
    /// The microphone's samples processed.
    private var nearCount = 0
    private var estimator: EchoDelayEstimator
    /// The measured delay (samples), once known, and how much later than given the far end
    /// goes to the canceller.
    public private(set) var measuredDelay: Int?
    private var lag = 0
    /// Delay left to the canceller's own estimate: the estimate can be up to about 50 ms
    /// later than the direct sound, and the canceller's far end must never come after it.
    public static let marginMs = 60
    /// The delay WebRTC's canceller (extended filter, delay-agnostic) finds by itself:
    /// measured at 40-120 ms (29-39 dB down), lost at 180 ms (3.5 dB) and beyond. Longer
    /// delays are brought within it: with the estimate up to 50 ms late, what is left to the
    /// canceller stays within 10-110 ms.
    public static let ownReachMs = 120
    /// The last measurement, until the next agrees with it.
    private var candidate: (delaySamples: Int, correlation: Double)?

    /// A processor at `rate` cancelling echo (`echoCancel`) and suppressing `noise`.
    /// `startingDelay` (samples at `rate`): the delay measured before on the same path (the
    /// same far end, output and cabin), used until this processor has measured its own.
    public init(rate: Int, echoCancel: Bool, noise: Noise, startingDelay: Int? = nil,
                pluginDirectories: [String] = PluginLibrary.searchDirectories) throws(PluginLibrary.Unavailable) {
        guard Self.rates.contains(rate) else {
            throw PluginLibrary.Unavailable(message: "\(Self.feature) works at \(Self.rates.map(String.init).joined(separator: ", ")) Hz, not \(rate)")
        }
        let entries = try Entries.loaded(from: pluginDirectories).get()
        var message = [CChar](repeating: 0, count: 256)
        guard let made = entries.new(Int32(rate), echoCancel ? 1 : 0, noise.rawValue, &message, message.count) else {
            throw PluginLibrary.Unavailable(message: "\(Self.feature) is unavailable: " + String(nulTerminated: message))
        }
        self.rate = rate
        frameSize = rate / 100
        self.entries = entries
        self.echoCancel = echoCancel
        self.noise = noise
        processor = made
        estimator = EchoDelayEstimator(rate: rate)
        if echoCancel, let startingDelay, startingDelay >= 0 {
            lag = Self.lag(for: startingDelay, rate: rate)
            assumedDelay = startingDelay
        }
    }

    /// How much later than given the far end goes to the canceller for a delay `delay`:
    /// nothing within the canceller's own reach, else the delay less the margin.
    static func lag(for delay: Int, rate: Int) -> Int {
        let ms = rate / 1000
        return delay > ownReachMs * ms ? delay - marginMs * ms : 0
    }

    /// The delay this processor started from (`startingDelay`), until it measures its own.
    private var assumedDelay: Int?

    deinit { entries.free(processor) }

    /// The far end, continuing what was given before. The first call says when it started
    /// playing, as the microphone's sample (`startedAt`, by default now): no later than it
    /// can be heard, since only later delays are measured.
    public func play(_ samples: some Collection<Float>, startedAt: Int? = nil) {
        guard echoCancel else { return }
        if farOrigin == nil {
            let start = startedAt ?? nearCount
            farOrigin = start
            estimator.farStarts(atNearSample: start)
        }
        far.append(contentsOf: samples)
        estimator.addFar(samples)
    }

    /// Processes microphone samples in place. Reads of whole 10 ms frames (every read, when
    /// a pass-thru's period is a multiple of 10 ms) are processed as they are; from the first
    /// read that is not, the audio goes through a queue that delays it by one frame (its
    /// first 10 ms are silence). Returns whether the module judged the last frame to hold
    /// voice.
    @discardableResult
    public func process(_ samples: inout [Float]) -> Bool {
        if pending == nil, samples.count % frameSize == 0 {
            processFrames(&samples)
        } else {
            if pending == nil { pending = (input: [], output: [Float](repeating: 0, count: frameSize)) }
            pending!.input.append(contentsOf: samples)
            let whole = pending!.input.count / frameSize * frameSize
            if whole > 0 {
                var frames = Array(pending!.input[0 ..< whole])
                pending!.input.removeFirst(whole)
                processFrames(&frames)
                pending!.output.append(contentsOf: frames)
            }
            samples = Array(pending!.output[0 ..< samples.count])
            pending!.output.removeFirst(samples.count)
        }
        return entries.voice(processor) != 0
    }

    /// The queue of reads that are not whole frames, once one came.
    private var pending: (input: [Float], output: [Float])?

    private func processFrames(_ samples: inout [Float]) {
        if echoCancel { estimator.addNear(samples) }
        var farFrame = [Float](repeating: 0, count: frameSize)
        samples.withUnsafeMutableBufferPointer { near in
            var offset = 0
            while offset < near.count {
                if echoCancel {
                    // The far sample heard with this frame's first, by the measured delay.
                    let first = nearCount - (farOrigin ?? nearCount) - lag - farDropped
                    for index in 0 ..< frameSize {
                        let at = first + index
                        farFrame[index] = at >= 0 && at < far.count ? far[at] : 0
                    }
                    _ = entries.far(processor, farFrame)
                }
                _ = entries.near(processor, near.baseAddress! + offset, 0)
                offset += frameSize
                nearCount += frameSize
                if echoCancel, nearCount % (rate / 4) < frameSize { followDelay() }
            }
        }
    }

    /// Every quarter second until a delay is adopted, then every two seconds around it. A
    /// measurement counts once the next one agrees, or alone when it correlates very well:
    /// speech repeats itself enough for a single weaker one to be wrong.
    private func followDelay() {
        guard farOrigin != nil else { return }
        if measuredDelay != nil && nearCount % (2 * rate) >= frameSize { return }
        guard let estimate = estimator.estimate(around: measuredDelay) else { return }
        let ms = rate / 1000
        // Adopted when the one before agrees within 30 ms (the better correlated of the two
        // is kept), or at once when it correlates at 0.85 or more.
        let found: Int
        if let previous = candidate, abs(estimate.delaySamples - previous.delaySamples) <= 30 * ms {
            found = estimate.correlation >= previous.correlation ? estimate.delaySamples : previous.delaySamples
        } else if estimate.correlation >= 0.85 {
            found = estimate.delaySamples
        } else {
            candidate = estimate
            return
        }
        candidate = estimate
        measuredDelay = found
        // The canceller follows a delay up to `ownReachMs` itself, better than after a
        // jump in its far end. Beyond, the far end is handed over later by the delay less
        // `marginMs`, and moved again only when the delay left to the canceller leaves
        // 15 ms...`ownReachMs` (a drift; each move costs it some convergence).
        let left = found - lag
        let inStep = lag == 0 ? found <= Self.ownReachMs * ms : (15 * ms ... Self.ownReachMs * ms).contains(left)
        if !inStep {
            let wanted = Self.lag(for: found, rate: rate)
            // A canceller that adapted to a far end out of step recovers from a jump far
            // more slowly than a new one converges: the first alignment starts it afresh,
            // as does the first measurement that the starting delay was wrong.
            let outOfStep = lag == 0 ? wanted > 0 : assumedDelay != nil
            if outOfStep, let fresh = entries.new(Int32(rate), 1, noise.rawValue, nil, 0) {
                entries.free(processor)
                processor = fresh
            }
            lag = wanted
        }
        assumedDelay = nil
        // The far end no delay can reach again.
        let reachable = nearCount - (farOrigin ?? 0) - estimator.maxDelayBlocks * estimator.blockSize - farDropped
        if reachable > rate {
            far.removeFirst(reachable)
            farDropped += reachable
        }
    }

    /// 16-bit signed little-endian or 8-bit unsigned PCM, processed in place.
    public func process(pcm bytes: inout [UInt8], bitsPerSample: Int) {
        var samples = PCMSamples.floats(bytes, bitsPerSample: bitsPerSample)
        process(&samples)
        PCMSamples.store(samples, into: &bytes, bitsPerSample: bitsPerSample)
    }

    /// The plugin's entry points, as addresses (Sendable), loaded once.
    private struct Entries: Sendable {
        typealias New = @convention(c) (Int32, Int32, Int32, UnsafeMutablePointer<CChar>?, Int) -> OpaquePointer?
        typealias Free = @convention(c) (OpaquePointer?) -> Void
        typealias Far = @convention(c) (OpaquePointer?, UnsafePointer<Float>?) -> Int32
        typealias Near = @convention(c) (OpaquePointer?, UnsafeMutablePointer<Float>?, Int32) -> Int32
        typealias Voice = @convention(c) (OpaquePointer?) -> Int32

        let addresses: [UInt]
        var new: New { unsafeBitCast(UnsafeRawPointer(bitPattern: addresses[0])!, to: New.self) }
        var free: Free { unsafeBitCast(UnsafeRawPointer(bitPattern: addresses[1])!, to: Free.self) }
        var far: Far { unsafeBitCast(UnsafeRawPointer(bitPattern: addresses[2])!, to: Far.self) }
        var near: Near { unsafeBitCast(UnsafeRawPointer(bitPattern: addresses[3])!, to: Near.self) }
        var voice: Voice { unsafeBitCast(UnsafeRawPointer(bitPattern: addresses[4])!, to: Voice.self) }

        static let names = ["earshot_speech_processor_new", "earshot_speech_processor_free", "earshot_speech_processor_far",
                            "earshot_speech_processor_near", "earshot_speech_processor_voice"]
        private static let cache = Locked<[String: Result<Entries, PluginLibrary.Unavailable>]>([:])

        /// The entries from the first of `directories` holding the plugin; remembered,
        /// failures included, per search list.
        static func loaded(from directories: [String]) -> Result<Entries, PluginLibrary.Unavailable> {
            let key = directories.joined(separator: "\n")
            return cache.withLock { cache in
                if let known = cache[key] { return known }
                let found = PluginLibrary.load(fileName, feature: feature, from: directories).flatMap { library in
                    names.reduce(Result<[UInt], PluginLibrary.Unavailable>.success([])) { list, name in
                        list.flatMap { addresses in library.function(name, feature: feature).map { addresses + [$0] } }
                    }
                }.map(Entries.init(addresses:))
                cache[key] = found
                return found
            }
        }
    }
}

/// PCM bytes as float samples in [-1, 1] and back: 16-bit signed little-endian, or 8-bit
/// unsigned (SmartDeviceLink's two sample formats).
public enum PCMSamples {
    public static func floats(_ bytes: [UInt8], bitsPerSample: Int) -> [Float] {
        if bitsPerSample == 8 { return bytes.map { (Float($0) - 128) / 128 } }
        return (0 ..< bytes.count / 2).map { index in
            Float(Int16(bitPattern: UInt16(bytes[2 * index]) | UInt16(bytes[2 * index + 1]) << 8)) / 32768
        }
    }

    public static func store(_ samples: [Float], into bytes: inout [UInt8], bitsPerSample: Int) {
        if bitsPerSample == 8 {
            for index in samples.indices {
                bytes[index] = UInt8(clamping: Int((samples[index] * 128).rounded()) + 128)
            }
            return
        }
        for index in samples.indices {
            let value = Int16(clamping: Int((samples[index] * 32768).rounded()))
            let bits = UInt16(bitPattern: value)
            bytes[2 * index] = UInt8(truncatingIfNeeded: bits)
            bytes[2 * index + 1] = UInt8(truncatingIfNeeded: bits >> 8)
        }
    }
}
