import CaptureCore
import EarshotALSA
import EarshotContract
import EarshotDBus
import EarshotService
import EarshotSpeechProcessing
import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// One pass-thru on the bus: its object, its ALSA stream, its owner.
///
/// Audio arrives on the stream's reading thread and is cut into chunks under `core`'s
/// lock, which also orders every signal the pass-thru emits. When the audio only goes to
/// pipes (`Delivery` `stream`, no `OutputPath`, no silence to watch), the reading thread
/// writes it to them itself while they keep up (`DirectCaptureConsumer`).
final class PassThruSession: DirectCaptureConsumer {
    /// The pass-thru object's declared members.
    private typealias Members = CaptureContract.PassThru

    let id: UInt64
    let path: ObjectPath
    let owner: String
    let request: PassThruRequest
    private let service: CaptureService
    private let stream: CaptureStream
    /// The exported object, and its `AudioPassThru` signal prepared for the owner.
    private let objectBox = Locked<(object: ExportedObject, chunks: PreparedSignal)?>(nil)
    private let core: Locked<PassThru>
    private let pipes = Locked<[StreamPipe]>([])
    /// `FramesCaptured`, read live by `Get`: it changes with every read and is not announced.
    private let framesCapturedNow = FrameCounter()
    /// Its end by MaxDuration (µs, CLOCK_MONOTONIC): exact from its first read, estimated
    /// from its prompt's end while it prompts; 0 while not known.
    private let endsAtUs = Locked<UInt64>(0)
    /// When its prompt ends (µs, CLOCK_MONOTONIC), once the alert service says; 0 before,
    /// and without a prompt.
    private let promptEndUs = Locked<UInt64>(0)
    /// `OutputPath`'s file, when asked for.
    private let output: WaveOutput?
    private let watcher = Locked<Task<Void, Never>?>(nil)
    /// Echo cancellation and noise suppression (`NoiseSuppression`, `BargeIn`), applied on
    /// the reading thread to every read before anything else sees it; nil when the request
    /// asks for neither, and the audio is then exactly what the device read. Its lock is
    /// taken by the reading thread and, once, by the task giving it the prompt's audio.
    private let speech: Mutex<SpeechProcessor>?
    /// With `BargeIn` and a prompt: what the alert service plays of it, for the canceller,
    /// and the pipe's writing end until it is handed to the alert service.
    private let promptReference: PromptReference?
    private let promptAudio: UnixFD?
    /// With `EchoCancel`: what the speakers play, from the echo reference device. It hears
    /// the prompt too, which is then not handed over separately.
    private let deviceReference: DeviceReference?
    /// The echo delay an earlier pass-thru measured on this one's path, which its canceller
    /// starts from (samples), and the input that path reaches.
    private let startingDelay: Int?
    private let device: String
    private var logger: Logger { service.logger }
    private var connection: DBusConnection { service.connection }

    init(id: UInt64, request: PassThruRequest, owner: String, input: CaptureService.Input, output: WaveOutput?,
         service: CaptureService) throws(DBusError) {
        self.id = id
        self.request = request
        self.owner = owner
        self.output = output
        self.service = service
        path = try CaptureInterfaces.managerPath.appending("PassThru").appending(String(id))
        core = Locked(PassThru(request: request))
        if request.processesSpeech {
            guard request.channels == 1 else {
                throw .earshot(.unsupportedResource, "speech processing takes a mono input; the input in use gives \(request.channels) channels")
            }
            do {
                // In step from the first frame when an earlier pass-thru measured this path.
                let startingDelay = EchoDelayMemory.remembers(request)
                    ? service.echoDelays.withLock { $0.delay(to: input.device, rate: Int(request.samplingRate)) } : nil
                speech = Mutex(try SpeechProcessor(rate: Int(request.samplingRate), echoCancel: request.cancelsEcho,
                                                   noise: Self.noise(request.noiseSuppression), startingDelay: startingDelay))
                self.startingDelay = startingDelay
            } catch {
                throw .earshot(.unsupportedResource, error.message)
            }
        } else {
            speech = nil
            startingDelay = nil
        }
        device = input.device
        if request.bargesIn && !request.echoCancel {
            (promptReference, promptAudio) = try PromptReference.make(rate: Int(request.samplingRate), passThru: id)
        } else {
            (promptReference, promptAudio) = (nil, nil)
        }
        if request.echoCancel, let device = service.settings.echoReference {
            deviceReference = try DeviceReference(device: device, rate: Int(request.samplingRate), passThru: id,
                                                  pacing: service.settings.pacing)
        } else {
            deviceReference = nil
        }
        let periodFrames = CapturePeriod.frames(for: request, sessionLimitSeconds: input.periodLimitSeconds)
        let format = PCMFormat(sampleRate: request.samplingRate, channels: request.channels, bitsPerSample: request.bitsPerSample)
        do {
            stream = try CaptureStream(device: input.device, format: format, periodFrames: periodFrames,
                                       pacing: service.settings.pacing)
        } catch {
            switch error {
            case .unsupported(_, let message): throw .earshot(.unsupportedResource, message)
            default: throw .earshot(.genericError, error.description)
            }
        }
        let phase = core.withLock { $0.phase }
        // The interface's handlers refer to `self`, so it is exported last.
        let interface = CaptureInterfaces.passThruInterface(self)
        do {
            let exported = try service.connection.export(path, interfaces: [interface], values: [
                (Members.state, .string(phase.rawValue)),
                (Members.owner, .string(owner)),
                (Members.samplingRate, .uint32(request.samplingRate)),
                (Members.bitsPerSample, .uint32(request.bitsPerSample)),
                (Members.channels, .uint32(request.channels)),
                (Members.maxDuration, .uint32(request.maxDurationMs)),
                (Members.displayText1, .string(request.displayText1)),
                (Members.displayText2, .string(request.displayText2)),
                (Members.endsAtMonotonicUs, .uint64(0)),
            ])
            let chunks = try exported.prepare(Members.audioPassThru, to: owner)
            objectBox.withLock { $0 = (exported, chunks) }
        } catch {
            stream.stop()
            deviceReference?.stop()
            throw error
        }
    }

    /// Until its end by MaxDuration, rounded up: exact once it records (from the device's
    /// start), from the prompt's end while it prompts, the whole MaxDuration before that
    /// end is known.
    var remainingMs: UInt32 {
        let end = endsAtUs.withLock { $0 }
        guard end > 0 else { return core.withLock { $0.remainingMs } }
        let now = monotonicMicroseconds()
        return end > now ? UInt32(clamping: (end - now + 999) / 1000) : 0
    }
    var framesCaptured: UInt64 { framesCapturedNow.value }
    var periodFrames: UInt32 { stream.grantedPeriodFrames }
    var bufferFrames: UInt32 { stream.grantedBufferFrames }

    // MARK: Running

    /// Starts watching the owner, speaks the prompt if there is one, then records.
    func begin() {
        output?.start()
        let owner = self.owner
        if !request.outliveOwner { watchOwner(owner) }
        guard !request.initialPrompt.isEmpty else {
            record()
            return
        }
        if request.bargesIn {
            // Recording starts with the prompt; the canceller gets what the alert service
            // plays of it. The audio session is claimed after the prompt, as without
            // BargeIn, so the prompt is not muted as other audio.
            startReading()
        }
        let reference = promptReference
        Task {
            let spoken = await PromptSpeaker.speak(request.initialPrompt, on: connection, logger: logger, playedAudio: promptAudio,
                                                   started: { reference?.started(atUs: $0) }) { [weak self] end in
                self?.promptWillEnd(atUs: end)
            }
            let recording = core.withLock { state -> Bool in
                state.promptFinished(spoken: spoken)
                return state.phase == .recording
            }
            guard recording else { return }
            if request.bargesIn {
                await service.claimAudio(for: id, muteAudio: request.muteAudio)
                if !core.withLock({ $0.phase == .recording }) { service.sessionClaims.release(for: id) }
                return
            }
            setProperty(Members.state, .string(PassThru.Phase.recording.rawValue))
            record()
        }
    }

    private static func noise(_ level: PassThruRequest.NoiseSuppression) -> SpeechProcessor.Noise {
        switch level {
        case .off: .off
        case .moderate: .moderate
        case .high: .high
        }
    }

    /// The prompt ends at `promptEndUs`: until recording starts, the pass-thru's end is
    /// the latest `PromptedStart` allows; its first read then says exactly.
    private func promptWillEnd(atUs promptEndUs: UInt64) {
        guard core.withLock({ $0.phase == .prompting }) else { return }
        self.promptEndUs.withLock { $0 = promptEndUs }
        let end = PromptedStart.endUs(promptEndUs: promptEndUs, maxFrames: request.maxFrames,
                                      periodFrames: stream.grantedPeriodFrames, rate: request.samplingRate)
        let estimated = endsAtUs.withLock { known -> Bool in
            guard known == 0 else { return false }  // recording has begun: it knows better
            known = end
            return true
        }
        guard estimated else { return }
        setProperty(Members.endsAtMonotonicUs, .uint64(end))
        service.publishEnd(end, of: self)
    }

    /// Ends the pass-thru with `owner-vanished` when its owner leaves the bus.
    private func watchOwner(_ owner: String) {
        watcher.withLock { task in
            task = Task { [weak self] in
                guard let self, let owners = try? await self.connection.watchNameOwner(owner) else { return }
                for await current in owners where current == nil {
                    self.logger.info("pass-thru \(self.id): its owner \(owner) left the bus")
                    self.end(.ownerVanished)
                    return
                }
            }
        }
    }

    /// Claims the audio session (muting other audio with `MuteAudio`), then reads: after a
    /// prompt, no sooner than `PromptedStart` allows.
    private func record() {
        Task {
            await service.claimAudio(for: id, muteAudio: request.muteAudio)
            // After a prompt, not sooner than the end told while it was spoken allows.
            if let promptEnd = promptEndUs.withLock({ $0 > 0 ? $0 : nil }) {
                let start = PromptedStart.earliestStartUs(promptEndUs: promptEnd)
                let now = monotonicMicroseconds()
                if start > now { try? await Task.sleep(for: .microseconds(Int64(start - now))) }
            }
            // Ended while the session answered: the claim may have come after the release.
            guard core.withLock({ $0.phase == .recording }) else {
                service.sessionClaims.release(for: id)
                return
            }
            startReading()
        }
    }

    private func startReading() {
        deviceReference?.start(logger: logger)
        // Only signals carry each chunk's time; the first read's sets the end (and places
        // the far end).
        stream.start(timestamps: request.delivery.sendsSignals ? .everyRead : .firstRead, direct: readsGoStraightToPipes ? self : nil,
                     onData: { [self] bytes, _, monotonicUs in
            if request.processesSpeech {
                var processed = bytes
                let bits = Int(request.bitsPerSample)
                let frames = bytes.count / max(1, request.bytesPerFrame)
                promptReference?.read(atUs: monotonicUs, frames: frames)
                deviceReference?.read(atUs: monotonicUs, frames: frames)
                speech?.withLock { processor in
                    promptReference?.feed(processor, logger: logger)
                    deviceReference?.feed(processor, logger: logger)
                    processor.process(pcm: &processed, bitsPerSample: bits)
                }
                captured(processed, monotonicUs: monotonicUs)
            } else {
                captured(bytes, monotonicUs: monotonicUs)
            }
        }, onEnd: { [self] error in
            if let error {
                logger.error("pass-thru \(id): capture failed: \(error)")
                end(.deviceError)
            }
        })
    }

    /// Audio from the reading thread.
    private func captured(_ bytes: [UInt8], monotonicUs: UInt64) {
        let (outcome, first) = core.withLock { state -> (PassThruOutcome?, Bool) in
            let first = state.framesCaptured == 0 && state.phase == .recording
            let outcome = state.capture(bytes, monotonicUs: monotonicUs) { send($0) }
            framesCapturedNow.set(state.framesCaptured)
            return (outcome, first)
        }
        if first {
            // The first read completes a period after the device started.
            let readFrames = UInt64(bytes.count / max(1, request.bytesPerFrame))
            let startUs = monotonicUs - min(monotonicUs, readFrames * 1_000_000 / UInt64(request.samplingRate))
            let end = CapturePeriod.endUs(startUs: startUs, maxFrames: request.maxFrames, periodFrames: stream.grantedPeriodFrames,
                                          rate: request.samplingRate)
            endsAtUs.withLock { $0 = end }
            if outcome == nil {
                setProperty(Members.endsAtMonotonicUs, .uint64(end))
                service.publishEnd(end, of: self)
            }
        }
        if let outcome {
            finish(outcome)
        } else if readsGoStraightToPipes {
            // Reads came here, not straight to the pipes: once they keep up again, they may.
            stream.redirect()
        }
    }

    /// Ends the pass-thru (once); the short last chunk goes out before `Finished`. For a
    /// user's end it holds the audio the device captured up to now.
    func end(_ reason: EndReason) {
        // No read reaches a pipe after the end.
        stream.stop(draining: reason.keepsHeardAudio)
        let outcome = core.withLock { state -> PassThruOutcome? in
            guard let last = state.end(reason, monotonicUs: monotonicMicroseconds()) else { return nil }
            send(last)
            return state.outcome
        }
        if let outcome { finish(outcome) }
    }

    /// A user action (`End`, `Done`, `Cancel`, `Retry`). `End` is the owner's; the HMI's
    /// actions may also come from uid 0 or the service's own user.
    func userEnd(_ reason: EndReason, call: MethodCall, ownerOnly: Bool) async throws {
        if call.sender != owner {
            let caller = try await call.caller()
            let privileged = caller.uid == 0 || caller.uid == getuid()
            guard privileged && (!ownerOnly || service.settings.systemBus) else {
                throw DBusError.earshot(.disallowed, "\(call.message.member ?? "this"): only the owner \(owner) may end this pass-thru")
            }
        }
        guard core.withLock({ $0.phase }) != .finished else {
            throw DBusError.earshot(.rejected, "the pass-thru has already finished")
        }
        end(reason)
    }

    /// A pipe carrying the PCM from now on (owner only).
    func openStream(_ call: MethodCall) throws(DBusError) -> UnixFD {
        guard call.sender == owner else { throw .earshot(.disallowed, "\(CaptureContract.PassThru.openStream.name): only the owner \(owner) may open the stream") }
        let (reader, pipe) = try StreamPipe.make()
        let open = core.withLock { state -> Bool in
            guard state.phase != .finished else { return false }
            pipes.withLock { $0.append(pipe) }
            return true
        }
        // Reads written straight to the pipes go to this one too from the next.
        if open { stream.redirect() }
        guard open else {
            var unused = pipe
            unused.close()
            throw .earshot(.rejected, "the pass-thru has already finished")
        }
        return reader
    }

    // MARK: Output (under `core`'s lock)

    private func send(_ chunks: [AudioChunk]) {
        for chunk in chunks { send(chunk) }
    }

    /// One chunk: as a signal (unless `Delivery` is `stream`), to the file and to every pipe.
    private func send(_ chunk: AudioChunk) {
        if request.delivery.sendsSignals {
            do {
                _ = try objectBox.withLock { try $0?.chunks.send([.bytes(DBusBytes(chunk.data)), .uint64(chunk.sequence), .uint64(chunk.monotonicUs)]) }
            } catch {
                logger.warning("pass-thru \(id): chunk \(chunk.sequence) not sent: \(error)")
            }
        }
        output?.append(chunk.data)
        pipes.withLock { list in
            for index in list.indices { list[index].write(chunk.data) }
        }
    }

    private func finish(_ outcome: PassThruOutcome) {
        stream.stop()
        promptReference?.close()
        deviceReference?.stop()
        watcher.withLock { $0?.cancel() }
        // A reader that has caught up sees EOF now; one still behind gets the rest of its
        // stream in the background: ending waits for no reader.
        let open = pipes.withLock { list -> [StreamPipe] in
            defer { list.removeAll() }
            return list
        }
        for var pipe in open {
            if pipe.backlog.isEmpty {
                pipe.close()
            } else {
                Task { [pipe] in
                    var flushing = pipe
                    await flushing.finish()
                }
            }
        }
        let (frames, durationMs) = core.withLock { ($0.framesCaptured, $0.durationMs) }
        framesCapturedNow.set(frames)
        // The file is complete before anyone hears of the end.
        let outputError = output?.finish()
        if let outputError { logger.warning("pass-thru \(id): \(CaptureContract.Manager.Keys.outputPath.name): \(outputError)") }
        let endedUs = monotonicMicroseconds()
        // The device and the service's one slot are free before `Finished` goes out, so a
        // client may start its next pass-thru as soon as it hears this one end.
        service.finished(self)
        if let object = objectBox.withLock({ $0?.object }) {
            try? object.set([(Members.state, .string(PassThru.Phase.finished.rawValue)),
                             (Members.resultCode, .string(outcome.resultCode.rawValue))])
            do {
                try object.emit(Members.finished, [.string(outcome.resultCode.rawValue), .boolean(outcome.success),
                                             .vardict(finishedInfo(frames: frames, durationMs: durationMs, outcome: outcome,
                                                                   endedUs: endedUs, outputError: outputError))])
            } catch {
                logger.warning("pass-thru \(id): Finished not sent: \(error)")
            }
        }
        // An overrun loses samples the device had: said, for whoever compares the recording.
        let recoveries = stream.recoveries
        let lost = recoveries > 0 ? "; \(recoveries) overrun(s) recovered: samples were lost" : ""
        let rate = Int(request.samplingRate)
        let measured = speech?.withLock { $0.measuredDelay }
        if let measured, EchoDelayMemory.remembers(request) {
            service.echoDelays.withLock { $0.remember(measured, at: rate, to: device) }
        }
        let started = startingDelay.map { " (started from \($0 * 1000 / rate) ms)" } ?? ""
        let delay = request.cancelsEcho ? measured.map { "; echo heard \($0 * 1000 / rate) ms after it played\(started)" }
            ?? (startingDelay == nil ? nil : "; echo delay not measured\(started)") : nil
        logger.info("pass-thru \(id) finished: \(outcome.resultCode.rawValue) (\(outcome.reason.rawValue)), \(frames) frames, \(durationMs) ms\(lost)\(delay ?? "")",
                    metadata: ["passthru": "\(id)", "result": "\(outcome.resultCode.rawValue)", "reason": "\(outcome.reason.rawValue)"])
    }

    // MARK: Straight to the pipes (on the reading thread)

    /// Whether the pipes are the audio's only way out: no signals, no file.
    private var onlyPipesTakeAudio: Bool { !request.delivery.sendsSignals && output == nil }
    /// Whether reads may go from the reading thread straight to the pipes: they are the only
    /// way out and nothing processes the audio first.
    private var readsGoStraightToPipes: Bool { onlyPipesTakeAudio && !request.processesSpeech }

    /// The pipes, while reads may be written to them straight from the reading thread: all
    /// open ones keep up, and the pass-thru records with nothing waiting to be cut.
    func directWrites() -> DirectWrites? {
        core.withLock { state -> DirectWrites? in
            guard state.canPassAudioBy else { return nil }
            return pipes.withLock { list -> DirectWrites? in
                list.removeAll { $0.closed }
                guard list.allSatisfy({ $0.backlog.isEmpty }) else { return nil }
                return DirectWrites(descriptors: list.map(\.writer), framesLeft: request.maxFrames - state.framesCaptured,
                                    counter: framesCapturedNow)
            }
        }
    }

    /// Counts what went straight to the pipes; a read a pipe did not take in full waits in
    /// its backlog (or ends it, when its reader went away) and goes to the pipes after it.
    func directWritesStopped(frames: UInt64, unfinished: UnfinishedWrite?) {
        let outcome = core.withLock { state -> PassThruOutcome? in
            let outcome = state.passedBy(frames: frames + (unfinished?.frames ?? 0))
            framesCapturedNow.set(state.framesCaptured)
            if let unfinished {
                pipes.withLock { list in
                    guard unfinished.index < list.count else { return }
                    list[unfinished.index].takeOver(unfinished.bytes, written: unfinished.written, error: unfinished.error)
                    for index in list.indices where index > unfinished.index { list[index].write(unfinished.bytes) }
                }
            }
            return outcome
        }
        if let outcome { finish(outcome) }
    }

    private func setProperty(_ property: PropertyDeclaration, _ value: DBusValue) {
        try? objectBox.withLock { try $0?.object.set(property, value) }
    }
}

extension PassThruSession {
    /// `Finished`'s info, by its declared keys.
    func finishedInfo(frames: UInt64, durationMs: UInt32, outcome: PassThruOutcome, endedUs: UInt64,
                      outputError: String?) -> [String: DBusValue] {
        typealias Keys = CaptureContract.PassThru.FinishedKeys
        var info: [String: DBusValue] = [Keys.framesCaptured.name: .uint64(frames), Keys.durationMs.name: .uint32(durationMs),
                                         Keys.reason.name: .string(outcome.reason.rawValue), Keys.monotonicUs.name: .uint64(endedUs)]
        info[Keys.outputError] = outputError.map(DBusValue.string)
        return info
    }
}
