import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotService
import EarshotSync
import FoundationEssentials
import Glibc
import Logging
import OrchestratorCore

/// One `RecordPiece` job on the bus: its object, and the calls it makes to the other
/// services. Events go through one queue into the job's state machine (`RecordJob`), in
/// order; the commands it answers with start the calls, whose outcomes come back as events.
final class JobRunner: Sendable {
    /// The job object's declared members.
    private typealias Members = OrchestratorContract.Job

    let id: UInt64
    let path: ObjectPath
    let plan: RecordPlan
    let owner: String
    /// The owner's user: the piece's author.
    let ownerUID: UInt32
    private let service: OrchestratorService
    private let core = Locked(RecordJob())
    private let object = Locked<ExportedObject?>(nil)
    private let events: AsyncStream<JobEvent>.Continuation
    private let stream: AsyncStream<JobEvent>
    /// The pass-thru, once PerformAudioPassThru has replied.
    private let passThru = Locked<PassThru?>(nil)
    private let activation = Locked<ObjectPath?>(nil)
    /// The pass-thru's channel count.
    private let channels = Locked<UInt32>(1)
    /// The captured PCM, appended chunk by chunk.
    private let audioFile: String
    private let tasks = BackgroundTasks()
    /// Watches the owner leave the bus; cancelled when the job finishes.
    private let ownerWatch = Locked<Task<Void, Never>?>(nil)
    /// The calls the job's end makes (deleting a piece it stored, releasing its claim).
    private let closingTasks = BackgroundTasks()
    /// Whether the job has finished, and who waits for that.
    private let completion = Locked<(finished: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    private var connection: DBusConnection { service.connection }
    /// The other services, typed, on the service's connection.
    private var earshot: Earshot { Earshot(connection: service.connection) }
    private var logger: Logger { service.logger }

    init(id: UInt64, plan: RecordPlan, owner: String, ownerUID: UInt32, service: OrchestratorService) throws(DBusError) {
        self.id = id
        self.plan = plan
        self.owner = owner
        self.ownerUID = ownerUID
        self.service = service
        path = try OrchestratorInterfaces.managerPath.appending("Job").appending(String(id))
        audioFile = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-job-\(getpid())-\(id).raw").path
        (stream, events) = AsyncStream<JobEvent>.makeStream()
        let exported = try service.connection.export(path, interfaces: [OrchestratorInterfaces.jobInterface(self)], values: [
            (Members.state, .string(OrchestratorCore.JobState.preparing.rawValue)), (Members.pieceId, .string("")), (Members.resultCode, .string("")),
            (Members.framesCaptured, .uint64(0)), (Members.title, .string(plan.title)), (Members.owner, .string(owner)),
        ])
        object.withLock { $0 = exported }
    }

    // MARK: Running

    func begin() {
        tasks.run { [self] in
            send(core.withLock { $0.start() })
            for await event in stream {
                let commands = core.withLock { $0.handle(event) }
                publish()
                send(commands)
                if core.withLock({ $0.state }) == .finished { break }
            }
        }
        if !plan.outliveOwner { watchOwner() }
    }

    func serviceLost(_ name: ServiceName) { events.yield(.serviceLost(name)) }

    /// The service is shutting down: end the job where it is, as a cancel would.
    func abandon() { events.yield(.cancel) }

    /// Returns once the job has finished and the calls its end made have returned.
    func settled() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let finished = completion.withLock { state -> Bool in
                if state.finished { return true }
                state.waiters.append(continuation)
                return false
            }
            if finished { continuation.resume() }
        }
        await closingTasks.waitForAll()
    }

    func cancel(_ call: MethodCall) async throws {
        if call.sender != owner {
            let caller = try await call.caller()
            guard (caller.uid == 0 || caller.uid == getuid()) && service.settings.systemBus else {
                throw DBusError.earshot(.disallowed, "Cancel: only the owner \(owner) may cancel this job")
            }
        }
        guard core.withLock({ $0.state }) != .finished else { throw DBusError.earshot(.rejected, "the job has already finished") }
        logger.info("job \(id): cancelled by \(call.sender)")
        events.yield(.cancel)
    }

    private func watchOwner() {
        let owner = self.owner
        let connection = self.connection
        let watch = Task { [weak self] in
            guard let owners = try? await connection.watchNameOwner(owner) else { return }
            for await current in owners where current == nil {
                self?.logger.info("job \(self?.id ?? 0): its owner \(owner) left the bus; cancelling")
                self?.events.yield(.cancel)
                return
            }
        }
        ownerWatch.withLock { $0 = watch }
    }


    private func publish() {
        let (state, pieceID, code, frames) = core.withLock { ($0.state, $0.pieceID, $0.resultCode, $0.framesCaptured) }
        try? object.withLock {
            try $0?.set([(Members.state, .string(state.rawValue)), (Members.pieceId, .string(pieceID)),
                          (Members.resultCode, .string(code?.rawValue ?? "")), (Members.framesCaptured, .uint64(frames))])
        }
    }

    private func send(_ commands: [JobCommand]) {
        for command in commands { execute(command) }
    }

    // MARK: Commands

    private func execute(_ command: JobCommand) {
        switch command {
        case .activateSession: tasks.run { await self.activateSession() }
        case .startPassThru: tasks.run { await self.runPassThru() }
        case .cancelPassThru: tasks.run { await self.cancelPassThru() }
        case .store: tasks.run { await self.store() }
        case .presentConfirmation: tasks.run { await self.confirm() }
        case .scheduleRetry(let milliseconds):
            tasks.run { [events] in
                try? await Task.sleep(for: .milliseconds(Int(milliseconds)))
                events.yield(.retryDue)
            }
        // What ends the job is waited for before it counts as settled.
        case .deletePiece(let pieceID): closingTasks.run { await self.delete(pieceID) }
        case .releaseSession: closingTasks.run { await self.releaseSession() }
        case .finish(let code, let pieceID, let reason): finish(code, pieceID: pieceID, reason: reason)
        }
    }

    private func activateSession() async {
        do {
            activation.withLock { $0 = nil }
            let claim = try await SessionClient(connection: connection).activate(category: "record")
            activation.withLock { $0 = claim }
            events.yield(.sessionReady)
        } catch {
            events.yield(.sessionRefused(String(describing: error)))
        }
    }

    private func releaseSession() async {
        guard let claim = activation.withLock({ state -> ObjectPath? in
            defer { state = nil }
            return state
        }) else { return }
        await SessionClient(connection: connection).deactivate(claim)
    }

    private func runPassThru() async {
        let passThru: PassThru
        do {
            passThru = try await earshot.capture.perform(plan.passThruRequest)
        } catch {
            let error = EarshotError(describing: error)
            let code = error.resultCode ?? .genericError
            let tryAgainMs: UInt32? = code == .rejected ? await activePassThruRemainingMs() ?? 100 : nil
            events.yield(.passThruRefused(code, error.description, tryAgainMs: tryAgainMs))
            return
        }
        self.passThru.withLock { $0 = passThru }
        let output = open(audioFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else {
            events.yield(.passThruRefused(.genericError, "cannot create \(audioFile): \(String(cString: strerror(errno)))"))
            try? await passThru.cancel()
            return
        }
        defer { close(output) }
        // The session may have asked for stereo: the pass-thru says how many channels it records.
        let channels = max(1, (try? await passThru.channels()) ?? 1)
        self.channels.withLock { $0 = channels }
        events.yield(.passThruStarted(prompting: (try? await passThru.state()) == .prompting))
        let bytesPerFrame = UInt64(plan.bitsPerSample / 8) * UInt64(channels)
        var bytes: UInt64 = 0
        for await chunk in passThru {
            if bytes == 0 { events.yield(.recordingStarted) }
            let failure = chunk.data.withUnsafeBytes { FileOutput.writeAll($0, to: output) }
            guard failure == 0 else {
                events.yield(.passThruFinished(.genericError, reason: "cannot write \(audioFile): \(String(cString: strerror(failure)))"))
                await cancelPassThru()
                return
            }
            bytes += UInt64(chunk.data.count)
            events.yield(.framesCaptured(bytes / max(1, bytesPerFrame)))
        }
        do {
            let result = try await passThru.result
            events.yield(.passThruFinished(result.resultCode, reason: result.reason.rawValue))
        } catch {
            events.yield(.passThruFinished(.genericError, reason: "\(EarshotError(describing: error))"))
        }
    }

    /// How long the pass-thru that holds the microphone still runs by its MaxDuration, from
    /// capture's `EndsAtMonotonicUs` (the same clock as ours); nil when capture is idle, has
    /// no end yet (it is still prompting) or cannot be asked.
    private func activePassThruRemainingMs() async -> UInt32? {
        guard let endsAt = try? await earshot.capture.endsAtMonotonicUs() else { return nil }
        let now = monotonicMicroseconds()
        guard endsAt > now else { return nil }
        return UInt32(clamping: (endsAt - now + 999) / 1000)
    }

    private func cancelPassThru() async {
        try? await passThru.withLock({ $0 })?.cancel()
    }

    private func store() async {
        let plan = self.plan
        let audioFile = self.audioFile
        let wav = audioFile + ".wav"
        let channels = self.channels.withLock { $0 }
        do {
            // The mix stem: the captured PCM behind a WAV header (written off the cooperative threads).
            try await service.disk.run {
                let data = try Data(contentsOf: URL(fileURLWithPath: audioFile))
                let header = PCMWave.header(sampleRate: plan.samplingRate, channels: channels, bitsPerSample: plan.bitsPerSample,
                                            dataBytes: UInt64(data.count))
                let padding = Data(count: data.count % 2)
                try (Data(header) + data + padding).write(to: URL(fileURLWithPath: wav))
            }
            defer { unlink(wav) }
            let fd = open(wav, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw DBusError.failed("cannot open \(wav)") }
            var piece = PieceDrop(title: plan.title, mixStem: .descriptor(UnixFD(taking: fd)), metadata: plan.metadata)
            piece.authorUid = ownerUID
            events.yield(.stored(pieceID: try await earshot.pieces.drop(piece)))
        } catch {
            events.yield(.storeFailed(EarshotError(describing: error).description))
        }
    }

    private func confirm() async {
        do {
            var alert = Alert(text: "Recording saved", secondaryText: plan.title, audio: [.text("Recording saved")])
            alert.timeout = 3
            let result = try await earshot.alerts.present(alert)
            events.yield(.confirmationCompleted(result.resultCode, tryAgainMs: result.tryAgainTimeMs))
        } catch {
            events.yield(.confirmationFailed(EarshotError(describing: error).description))
        }
    }

    private func delete(_ pieceID: String) async {
        do {
            try await earshot.pieces.delete(pieceID)
            logger.info("job \(id): piece \(pieceID) deleted (the job was cancelled)")
        } catch {
            logger.error("job \(id): cannot delete piece \(pieceID) of the cancelled job: \(error)")
        }
    }

    private func finish(_ code: ResultCode, pieceID: String, reason: String) {
        unlink(audioFile)
        let frames = core.withLock { $0.framesCaptured }
        typealias Keys = OrchestratorContract.Job.FinishedKeys
        let info: [String: DBusValue] = [Keys.reason.name: .string(reason), Keys.title.name: .string(plan.title),
                                         Keys.framesCaptured.name: .uint64(frames)]
        try? object.withLock { try $0?.emit(Members.finished, [.string(code.rawValue), .string(pieceID), .vardict(info)]) }
        logger.info("job \(id) finished: \(code.rawValue)\(pieceID.isEmpty ? "" : ", piece \(pieceID)") (\(reason))",
                    metadata: ["job": "\(id)", "result": "\(code.rawValue)", "piece": "\(pieceID)"])
        events.finish()
        ownerWatch.withLock { $0?.cancel() }
        service.finished(self)
        let waiters = completion.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.finished = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
