import ContractCore
import EarshotContract
import EarshotDBus

private typealias CaptureKeys = CaptureContract.Manager.Keys

/// A `PerformAudioPassThru` request (org.earshot.Capture1), checked against the contract
/// before it is sent.
public struct AudioPassThruRequest: Sendable {
    public var samplingRate: UInt32
    public var bitsPerSample: UInt32
    public var maxDurationMs: UInt32
    public var muteAudio = true
    public var initialPrompt: [SpeechChunk] = []
    public var displayText1: String?
    public var displayText2: String?
    public var chunkMs: UInt32?
    /// End with SUCCESS after this much silence following speech.
    public var endOnSilenceMs: UInt32?
    public var outliveOwner = false
    public var outputPath: String?
    public var delivery: Delivery = .signals
    /// Road noise suppressed in the audio (`NoiseSuppression`).
    public var noiseSuppression: NoiseSuppression = .off
    /// Recording starts with the prompt, its sound cancelled (`BargeIn`).
    public var bargeIn = false
    /// What the speakers play cancelled from the audio, as the service's echo reference
    /// hears it (`EchoCancel`).
    public var echoCancel = false

    public enum Delivery: String, Sendable, CaseIterable { case signals, stream, both }
    public enum NoiseSuppression: String, Sendable, CaseIterable { case off, moderate, high }

    public init(samplingRate: UInt32 = 16000, bitsPerSample: UInt32 = 16, maxDurationMs: UInt32) {
        self.samplingRate = samplingRate
        self.bitsPerSample = bitsPerSample
        self.maxDurationMs = maxDurationMs
    }

    var values: [String: DBusValue] {
        var values: [String: DBusValue] = [
            CaptureKeys.samplingRate.name: .uint32(samplingRate), CaptureKeys.bitsPerSample.name: .uint32(bitsPerSample),
            CaptureKeys.audioType.name: .string("PCM"), CaptureKeys.maxDuration.name: .uint32(maxDurationMs),
            CaptureKeys.muteAudio.name: .boolean(muteAudio), CaptureKeys.delivery.name: .string(delivery.rawValue),
        ]
        if !initialPrompt.isEmpty { values[CaptureKeys.initialPrompt] = SpeechChunk.value(initialPrompt) }
        values[CaptureKeys.displayText1] = displayText1.map(DBusValue.string)
        values[CaptureKeys.displayText2] = displayText2.map(DBusValue.string)
        values[CaptureKeys.chunkMs] = chunkMs.map(DBusValue.uint32)
        values[CaptureKeys.endOnSilenceMs] = endOnSilenceMs.map(DBusValue.uint32)
        if outliveOwner { values[CaptureKeys.outliveOwner] = .boolean(true) }
        values[CaptureKeys.outputPath] = outputPath.map(DBusValue.string)
        if noiseSuppression != .off { values[CaptureKeys.noiseSuppression] = .string(noiseSuppression.rawValue) }
        if bargeIn { values[CaptureKeys.bargeIn] = .boolean(true) }
        if echoCancel { values[CaptureKeys.echoCancel] = .boolean(true) }
        return values
    }
}

/// One chunk of captured PCM: raw interleaved samples, in order.
public struct AudioChunk: Sendable {
    public let data: [UInt8]
    public let sequence: UInt64
    /// When its last frame was read (CLOCK_MONOTONIC µs).
    public let monotonicUs: UInt64

    /// A chunk from an `AudioPassThru` signal's arguments; nil when they are not its (ay, t, t).
    public init?(audioPassThru arguments: [DBusValue]) {
        guard arguments.count == 3, case .bytes(let data) = arguments[0], let sequence = arguments[1].uint64Value,
              let monotonicUs = arguments[2].uint64Value else { return nil }
        self.data = data.array
        self.sequence = sequence
        self.monotonicUs = monotonicUs
    }
}

/// How a pass-thru ended.
public struct PassThruResult: Sendable, Equatable {
    public let resultCode: ResultCode
    public let success: Bool
    public let reason: PassThruEndReason
    public let framesCaptured: UInt64
    public let durationMs: UInt32
    /// When it ended (CLOCK_MONOTONIC µs).
    public let monotonicUs: UInt64?
    /// Why `OutputPath` could not be completed, when it could not.
    public let outputError: String?

    /// The result a `Finished` signal's arguments (s, b, a{sv}) give; nil when they are not those.
    public init?(finished arguments: [DBusValue]) {
        guard arguments.count == 3, let code = arguments[0].stringValue.flatMap(ResultCode.init(rawValue:)),
              let success = arguments[1].boolValue, let info = arguments[2].stringKeyedValue else { return nil }
        let keys = CaptureContract.PassThru.FinishedKeys.self
        self.resultCode = code
        self.success = success
        reason = PassThruEndReason(reported: info[keys.reason]?.stringValue ?? "")
        framesCaptured = info[keys.framesCaptured]?.uint64Value ?? 0
        durationMs = info[keys.durationMs]?.uint32Value ?? 0
        monotonicUs = info[keys.monotonicUs]?.uint64Value
        outputError = info[keys.outputError]?.stringValue
    }
}

/// A running pass-thru: its chunks as they arrive (an `AsyncSequence` that ends when the
/// pass-thru does), then its result. Ending it early: `end()`.
public final class PassThru: AsyncSequence, Sendable {
    public typealias Element = AudioChunk
    public let path: ObjectPath
    let calls: ServiceCalls
    private let chunks: AsyncStream<AudioChunk>
    private let finished: Task<PassThruResult, any Error>

    init(path: ObjectPath, calls: ServiceCalls, chunks: AsyncStream<AudioChunk>, finished: Task<PassThruResult, any Error>) {
        self.path = path
        self.calls = calls
        self.chunks = chunks
        self.finished = finished
    }

    public func makeAsyncIterator() -> AsyncStream<AudioChunk>.Iterator { chunks.makeAsyncIterator() }

    /// The result, once the pass-thru has finished.
    public var result: PassThruResult {
        get async throws {
            do {
                return try await finished.value
            } catch {
                throw EarshotError(error)
            }
        }
    }

    /// Ends it now with SUCCESS, keeping what was heard (the owner's `End`).
    public func end() async throws {
        _ = try await calls.call(path, CaptureContract.PassThru.interface, CaptureContract.PassThru.end)
    }

    /// Cancels it (ABORTED), as the HMI's Cancel.
    public func cancel() async throws { try await PassThruControl(path: path, calls: calls).cancel() }
}

/// `org.earshot.Capture1`.
public struct CaptureProxy: Sendable {
    private(set) var calls: ServiceCalls

    /// Calls give up after `timeout` (no reply: `org.freedesktop.DBus.Error.NoReply`).
    public init(connection: DBusConnection, timeout: Duration = DBusConnection.defaultTimeout) {
        calls = ServiceCalls(connection: connection, busName: CaptureContract.busName, timeout: timeout)
    }

    /// The same proxy with calls that give up after `timeout`.
    public func timing(out timeout: Duration) -> CaptureProxy {
        var proxy = self
        proxy.calls.timeout = timeout
        return proxy
    }

    /// Starts a pass-thru without following it (no subscription; its chunks, unicast to
    /// this connection, are not read): for a caller that takes the audio from `OutputPath`
    /// or `OpenStream`, or only ends it, by its object.
    public func start(_ request: AudioPassThruRequest) async throws -> PassThruControl {
        let values = request.values
        try RequestCheck.check(values, against: CaptureContract.Manager.requestKeys)
        let path = try await calls.object(ObjectPath(declared: CaptureContract.managerPath), CaptureContract.Manager.interface,
                                          CaptureContract.Manager.performAudioPassThru, [.vardict(values)])
        return PassThruControl(path: path, calls: calls)
    }

    /// Starts a pass-thru; its chunks and result come from the returned `PassThru`.
    public func perform(_ request: AudioPassThruRequest) async throws -> PassThru {
        typealias Members = CaptureContract.PassThru
        let values = request.values
        try RequestCheck.check(values, against: CaptureContract.Manager.requestKeys)
        // Subscribed before the call, so that no chunk and no end can be missed.
        let chunkSignals = try await calls.subscribe(Members.interface, Members.audioPassThru, addMatch: false)
        let endSignals = try await calls.subscribe(Members.interface, Members.finished)
        let path = try await calls.object(ObjectPath(declared: CaptureContract.managerPath), CaptureContract.Manager.interface,
                                          CaptureContract.Manager.performAudioPassThru, [.vardict(values)]) {
            chunkSignals.cancel()
            endSignals.cancel()
        }
        let (chunks, continuation) = AsyncStream<AudioChunk>.makeStream()
        let forwarding = Task {
            for await signal in chunkSignals where signal.path == path {
                guard let chunk = AudioChunk(audioPassThru: signal.body) else { continue }
                continuation.yield(chunk)
            }
            continuation.finish()
        }
        let finished = Task { () throws -> PassThruResult in
            defer { endSignals.cancel() }
            for await signal in endSignals where signal.path == path {
                guard let result = PassThruResult(finished: signal.body) else { continue }
                // Chunks come from the same sender before Finished: all of them are routed.
                chunkSignals.cancel()
                await forwarding.value
                return result
            }
            chunkSignals.cancel()
            throw EarshotError(name: DBusError.prefix + "Disconnected", message: "the bus went away before \(path) finished")
        }
        return PassThru(path: path, calls: calls, chunks: chunks, finished: finished)
    }

    /// Runs a pass-thru to its end, giving each chunk to `onChunk` as it arrives (SDL-0035's
    /// audio-data handler), and returns its result.
    public func perform(_ request: AudioPassThruRequest, onChunk: @escaping @Sendable (AudioChunk) -> Void) async throws -> PassThruResult {
        let passThru = try await perform(request)
        for await chunk in passThru { onChunk(chunk) }
        return try await passThru.result
    }
}

extension SpeechChunk {
    /// Chunks as the contract's `a(ss)`.
    static func value(_ chunks: [SpeechChunk]) -> DBusValue {
        .array(.structure([.string, .string]), chunks.map { .structure([.string($0.kind.rawValue), .string($0.text)]) })
    }

    /// Spoken text.
    public static func text(_ text: String) -> SpeechChunk { SpeechChunk(kind: .text, text: text) }

    /// A pause of `ms` milliseconds.
    public static func silence(ms: UInt32) -> SpeechChunk { SpeechChunk(kind: .silence, text: String(ms)) }

    /// An audio file the service plays (a path it can open as the caller).
    public static func file(_ path: String) -> SpeechChunk { SpeechChunk(kind: .file, text: path) }
}
