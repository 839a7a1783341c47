import ContractCore
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

    static let capture = CaptureContract.busName
    static let passThru = CaptureContract.PassThru.interface.name
    static let alerts = AlertsContract.busName
    static let pieces = PiecesContract.busName

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
    /// The pass-thru's object, once PerformAudioPassThru has replied.
    private let passThruPath = Locked<ObjectPath?>(nil)
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
            (Members.state, .string(JobState.preparing.rawValue)), (Members.pieceId, .string("")), (Members.resultCode, .string("")),
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
                throw DBusError.earshot("Disallowed", "Cancel: only the owner \(owner) may cancel this job")
            }
        }
        guard core.withLock({ $0.state }) != .finished else { throw DBusError.earshot("Rejected", "the job has already finished") }
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
        let subscription: SignalSubscription
        let passThru: ObjectPath
        do {
            subscription = try await connection.subscribe(MatchRule(sender: Self.capture, interface: Self.passThru))
            let reply = try await connection.call(destination: Self.capture, path: ObjectPath(declared: CaptureContract.managerPath),
                                                  interface: CaptureContract.Manager.interface.name,
                                                  member: CaptureContract.Manager.performAudioPassThru.name, [plan.passThruRequest])
            guard let replied = reply.first?.objectPathValue else { throw DBusError.failed("PerformAudioPassThru replied \(reply)") }
            passThru = replied
        } catch {
            let dbusError = error as? DBusError
            let code: ResultCode = switch dbusError?.name {
            case "org.earshot.Error.Rejected"?: .rejected
            case "org.earshot.Error.UnsupportedResource"?: .unsupportedResource
            case "org.earshot.Error.InvalidData"?: .invalidData
            default: .genericError
            }
            let tryAgainMs: UInt32? = code == .rejected ? await activePassThruRemainingMs() ?? 100 : nil
            events.yield(.passThruRefused(code, dbusError.map { "\($0.name): \($0.message)" } ?? String(describing: error),
                                          tryAgainMs: tryAgainMs))
            return
        }
        defer { subscription.cancel() }
        passThruPath.withLock { $0 = passThru }
        let output = open(audioFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else {
            events.yield(.passThruRefused(.genericError, "cannot create \(audioFile): \(String(cString: strerror(errno)))"))
            return
        }
        defer { close(output) }
        let properties = try? await connection.call(destination: Self.capture, path: passThru,
                                                    interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                                                    [.string(Self.passThru)]).first?.stringKeyedValue
        // The session may have asked for stereo: the pass-thru says how many channels it records.
        let channels = max(1, properties?[CaptureContract.PassThru.channels.name]?.uint32Value ?? 1)
        self.channels.withLock { $0 = channels }
        events.yield(.passThruStarted(prompting: properties?[CaptureContract.PassThru.state.name]?.stringValue == "prompting"))
        let bytesPerFrame = UInt64(plan.bitsPerSample / 8) * UInt64(channels)
        var bytes: UInt64 = 0
        for await signal in subscription where signal.path == passThru {
            switch signal.member {
            case CaptureContract.PassThru.audioPassThru.name:
                guard let chunk = signal.body.first?.bytesValue else { continue }
                if bytes == 0 { events.yield(.recordingStarted) }
                let failure = chunk.withUnsafeBytes { FileOutput.writeAll($0, to: output) }
                guard failure == 0 else {
                    events.yield(.passThruFinished(.genericError, reason: "cannot write \(audioFile): \(String(cString: strerror(failure)))"))
                    await cancelPassThru()
                    return
                }
                bytes += UInt64(chunk.count)
                events.yield(.framesCaptured(bytes / max(1, bytesPerFrame)))
            case CaptureContract.PassThru.finished.name:
                let code = signal.body.first?.stringValue.flatMap(ResultCode.init(rawValue:)) ?? .genericError
                let reason = signal.body.count > 2 ? signal.body[2].stringKeyedValue?["Reason"]?.stringValue ?? "" : ""
                events.yield(.passThruFinished(code, reason: reason))
                return
            default:
                continue
            }
        }
    }

    /// How long the pass-thru that holds the microphone still runs by its MaxDuration, from
    /// capture's `EndsAtMonotonicUs` (the same clock as ours); nil when capture is idle, has
    /// no end yet (it is still prompting) or cannot be asked.
    private func activePassThruRemainingMs() async -> UInt32? {
        let reply = try? await connection.call(destination: Self.capture, path: ObjectPath(declared: CaptureContract.managerPath),
                                               interface: "org.freedesktop.DBus.Properties", member: "Get",
                                               [.string(CaptureContract.Manager.interface.name),
                                                .string(CaptureContract.Manager.endsAtMonotonicUs.name)])
        guard let endsAt = reply?.first?.variantValue?.uint64Value, endsAt > 0 else { return nil }
        let now = monotonicMicroseconds()
        guard endsAt > now else { return nil }
        return UInt32(clamping: (endsAt - now + 999) / 1000)
    }

    private func cancelPassThru() async {
        guard let passThru = passThruPath.withLock({ $0 }) else { return }
        _ = try? await connection.call(destination: Self.capture, path: passThru, interface: Self.passThru,
                                       member: CaptureContract.PassThru.cancel.name)
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
            var piece = plan.metadata
            piece[PiecesContract.Manager.PieceKeys.title.name] = .string(plan.title)
            piece[PiecesContract.Manager.PieceKeys.mixStem.fd.name] = .unixFD(UnixFD(taking: fd))
            piece[PiecesContract.Manager.PieceKeys.authorUid.name] = .uint32(ownerUID)
            let reply = try await connection.call(destination: Self.pieces, path: ObjectPath(declared: PiecesContract.managerPath),
                                                  interface: PiecesContract.Manager.interface.name,
                                                  member: PiecesContract.Manager.drop.name, [.vardict(piece)], timeout: .seconds(120))
            guard let pieceID = reply.first?.stringValue else { throw DBusError.failed("Drop replied \(reply)") }
            events.yield(.stored(pieceID: pieceID))
        } catch {
            let message = (error as? DBusError).map { "\($0.name): \($0.message)" } ?? String(describing: error)
            events.yield(.storeFailed(message))
        }
    }

    private func confirm() async {
        do {
            let completions = try await connection.subscribe(MatchRule(sender: Self.alerts, interface: AlertsContract.Alert.interface.name,
                                                                       member: AlertsContract.Alert.completed.name))
            defer { completions.cancel() }
            let reply = try await connection.call(destination: Self.alerts, path: ObjectPath(declared: AlertsContract.managerPath),
                                                  interface: AlertsContract.Manager.interface.name,
                                                  member: AlertsContract.Manager.presentAlert.name, [.vardict([
                                                      "Text": .string("Recording saved"), "SecondaryText": .string(plan.title),
                                                      "Audio": .array(.structure([.string, .string]),
                                                                      [.structure([.string("TEXT"), .string("Recording saved")])]),
                                                      "Timeout": .double(3),
                                                  ])])
            guard let alert = reply.first?.objectPathValue else { throw DBusError.failed("PresentAlert replied \(reply)") }
            for await signal in completions where signal.path == alert {
                let code = signal.body.count > 1 ? signal.body[1].stringValue.flatMap(ResultCode.init(rawValue:)) ?? .genericError : .genericError
                let tryAgain = signal.body.count > 2 ? signal.body[2].stringKeyedValue?["TryAgainTimeMs"]?.uint32Value : nil
                events.yield(.confirmationCompleted(code, tryAgainMs: tryAgain))
                return
            }
        } catch {
            let message = (error as? DBusError).map { "\($0.name): \($0.message)" } ?? String(describing: error)
            events.yield(.confirmationFailed(message))
        }
    }

    private func delete(_ pieceID: String) async {
        do {
            _ = try await connection.call(destination: Self.pieces, path: ObjectPath(declared: PiecesContract.managerPath),
                                          interface: PiecesContract.Manager.interface.name,
                                          member: PiecesContract.Manager.delete.name, [.string(pieceID)])
            logger.info("job \(id): piece \(pieceID) deleted (the job was cancelled)")
        } catch {
            logger.error("job \(id): cannot delete piece \(pieceID) of the cancelled job: \(error)")
        }
    }

    private func finish(_ code: ResultCode, pieceID: String, reason: String) {
        unlink(audioFile)
        let frames = core.withLock { $0.framesCaptured }
        let info: [String: DBusValue] = ["Reason": .string(reason), "Title": .string(plan.title), "FramesCaptured": .uint64(frames)]
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
