import ContractCore

/// The life of one pass-thru, without D-Bus or ALSA: prompting, recording, finished;
/// frames counted against `MaxDuration`, chunks cut, silence watched, the first ending
/// wins.
public struct PassThru: Sendable {
    public enum Phase: String, Sendable {
        case prompting, recording, finished
    }

    /// What feeding captured audio produced.
    public struct Step: Sendable, Equatable {
        public var chunks: [AudioChunk] = []
        /// Set when this audio ended the pass-thru (timeout or silence).
        public var outcome: PassThruOutcome?
    }

    public let request: PassThruRequest
    public private(set) var phase: Phase
    public private(set) var framesCaptured: UInt64 = 0
    public private(set) var promptFailed = false
    public private(set) var outcome: PassThruOutcome?
    private var chunker: Chunker
    private var silence: SilenceTracker?

    /// Starts in `prompting` when the request has a prompt to wait for, else (no prompt, or
    /// `BargeIn`: recording starts with the prompt) in `recording`.
    public init(request: PassThruRequest, detector: (any VoiceActivityDetector)? = nil) {
        self.request = request
        phase = request.initialPrompt.isEmpty || request.bargesIn ? .recording : .prompting
        chunker = Chunker(sampleRate: request.samplingRate, chunkMs: request.chunkMs, bytesPerFrame: request.bytesPerFrame)
        if request.endOnSilenceMs > 0 {
            silence = SilenceTracker(endAfterMs: request.endOnSilenceMs, format: .init(request: request),
                                     detector: detector ?? EnergyVoiceDetector(sampleRate: request.samplingRate))
        }
    }

    /// The prompt finished: spoken, or not (the alert service is absent or failed), in
    /// which case a successful end becomes WARNINGS. Recording starts, unless it started
    /// with the prompt.
    public mutating func promptFinished(spoken: Bool) {
        guard phase != .finished else { return }
        if !spoken { promptFailed = true }
        phase = .recording
    }

    /// Milliseconds of `MaxDuration` left (all of it while prompting).
    public var remainingMs: UInt32 {
        guard phase != .finished else { return 0 }
        let capturedMs = framesCaptured * 1000 / UInt64(request.samplingRate)
        return UInt32(UInt64(request.maxDurationMs) - Swift.min(UInt64(request.maxDurationMs), capturedMs))
    }

    /// Feeds PCM read at `monotonicUs` (whole frames). Frames past `MaxDuration` are
    /// dropped; reaching it ends the pass-thru with `timeout` and flushes the last chunk.
    public mutating func capture(_ bytes: [UInt8], monotonicUs: UInt64) -> Step {
        var chunks: [AudioChunk] = []
        let outcome = capture(bytes, monotonicUs: monotonicUs) { chunks.append($0) }
        return Step(chunks: chunks, outcome: outcome)
    }

    /// `capture(_:monotonicUs:)` handing each chunk to `emit` as it is cut (no array of
    /// them is built); returns the outcome when this audio ended the pass-thru.
    public mutating func capture(_ bytes: [UInt8], monotonicUs: UInt64, _ emit: (AudioChunk) -> Void) -> PassThruOutcome? {
        guard phase == .recording else { return nil }
        let frameBytes = request.bytesPerFrame
        let offered = UInt64(bytes.count / frameBytes)
        let taken = Swift.min(offered, request.maxFrames - framesCaptured)
        let takenBytes = Int(taken) * frameBytes
        framesCaptured += taken
        if takenBytes == bytes.count {
            // The whole read (the usual case): handed on as it is.
            chunker.append(bytes, monotonicUs: monotonicUs, emit)
        } else {
            chunker.append(bytes[..<takenBytes], monotonicUs: monotonicUs, emit)
        }
        var ending: EndReason?
        if framesCaptured >= request.maxFrames {
            ending = .timeout
        } else if silence?.feed(bytes[..<takenBytes]) == true {
            // (Fed in place: the tracker and its detector are not copied per chunk.)
            ending = .silence
        }
        guard let ending else { return nil }
        finish(ending, monotonicUs: monotonicUs).forEach(emit)
        return outcome
    }

    /// Whether audio could go to its destinations without passing through here: while it
    /// records, with no frames waiting for the rest of their chunk and no silence to watch.
    public var canPassAudioBy: Bool {
        phase == .recording && !chunker.hasPending && silence == nil
    }

    /// Counts `frames` that went to their destinations without passing through here (see
    /// `canPassAudioBy`) against `MaxDuration`, as `capture` would; returns the outcome when
    /// they reached it (`timeout`; no chunk is left to flush).
    public mutating func passedBy(frames: UInt64) -> PassThruOutcome? {
        guard phase == .recording else { return nil }
        framesCaptured += Swift.min(frames, request.maxFrames - framesCaptured)
        guard framesCaptured >= request.maxFrames else { return nil }
        _ = finish(.timeout, monotonicUs: 0)
        return outcome
    }

    /// Ends the pass-thru for `reason` unless it already ended; returns the short last
    /// chunk (if any) to send before `Finished`.
    public mutating func end(_ reason: EndReason, monotonicUs: UInt64) -> [AudioChunk]? {
        guard phase != .finished else { return nil }
        return finish(reason, monotonicUs: monotonicUs)
    }

    private mutating func finish(_ reason: EndReason, monotonicUs: UInt64) -> [AudioChunk] {
        phase = .finished
        outcome = PassThruOutcome(reason: reason, promptFailed: promptFailed)
        return chunker.flush(monotonicUs: monotonicUs).map { [$0] } ?? []
    }

    /// Captured duration in milliseconds.
    public var durationMs: UInt32 {
        UInt32(Swift.min(UInt64(UInt32.max), framesCaptured * 1000 / UInt64(request.samplingRate)))
    }
}
