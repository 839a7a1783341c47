import AlertsCore
import CSndFileLoader
import CallerFiles
import ContractCore
import EarshotContract
import EarshotDBus
import EarshotService
import EarshotSync
import EarshotVoice
import FoundationEssentials
import Glibc
import Logging

/// The alert service: the queue of `AlertsCore` on the bus, with timers, owners, the
/// capture service's state and the audio output wired to it.
final class AlertsService: Sendable {
    private typealias Manager = AlertsContract.Manager

    struct Settings: Sendable {
        var outputDevice: String
        var outputRate: UInt32
        var linger: Duration
        var systemBus: Bool
    }

    private struct State {
        var queue = AlertQueue()
        /// Alerts queued or presented.
        var alerts: [UInt64: AlertObject] = [:]
        var playbacks: [UInt64: any AlertPlayback] = [:]
        var nextID: UInt64 = 1
        var defaultTimeout = AlertTimeouts.defaultTimeout
        var buttonTimeout = AlertTimeouts.defaultButtonTimeout
        var displayLines: UInt32 = 3
        var timer: Task<Void, Never>?
        var watchedOwners: Set<String> = []
        /// Set on shutdown: no alert is accepted any more.
        var stopping = false
    }

    let connection: DBusConnection
    let settings: Settings
    let logger: Logger
    let captureWatch: CaptureWatch
    let output: any AlertAudioOutput
    let sessionClaims: SessionClaims
    /// Where callers' files are opened (through earshot-open-as, off the bus's threads).
    let callerFiles = BlockingQueue(label: "earshot-alerts.caller-files", concurrent: true)
    /// Sees alerts appear and end (the optional desktop display).
    let observers: Locked<[any AlertObserver]>
    private let state = Locked(State())
    private let manager = Locked<ExportedObject?>(nil)

    init(connection: DBusConnection, settings: Settings, output: any AlertAudioOutput, logger: Logger) {
        self.connection = connection
        self.settings = settings
        self.logger = logger
        self.output = output
        captureWatch = CaptureWatch(connection: connection, logger: logger)
        sessionClaims = SessionClaims(connection: connection, subject: "alert", logger: logger)
        observers = Locked([])
    }

    static let speechKinds = SpeechChunk.Kind.allCases.map(\.rawValue)
    /// How long an alert's audio waits for the audio session to answer its claim.
    static let focusWait = Duration.milliseconds(100)

    func start() async throws {
        await sessionClaims.watchInterruptions { [weak self] id in self?.interrupted(id) }
        let object = try connection.export(AlertsInterfaces.managerPath, interfaces: [AlertsInterfaces.managerInterface(self)], values: [
            (Manager.defaultTimeout, .double(AlertTimeouts.defaultTimeout)),
            (Manager.buttonTimeout, .double(AlertTimeouts.defaultButtonTimeout)),
            (Manager.displayLines, .uint32(3)),
            (Manager.current, .objectPath(.root)),
            (Manager.queueLength, .uint32(0)),
            (Manager.capabilities, Self.capabilities(displayLines: 3)),
        ])
        manager.withLock { $0 = object }
        try await captureWatch.start()
        // Once quiet, the speech helper goes (and libespeak-ng with it), and libsndfile
        // (opened for a jingle or an audio file); the next alert starts and opens them again.
        MemoryReturn.whenIdle {
            SpeechSynthesizer.releaseEngine()
            _ = earshot_sndfile_release()
        }
    }

    static func capabilities(displayLines: UInt32) -> DBusValue {
        typealias Keys = AlertsContract.Manager.CapabilityKeys
        return .vardict([Keys.maxSoftButtons.name: .uint32(UInt32(AlertRequest.maxSoftButtons)), Keys.speech.name: .strings(speechKinds),
                         Keys.displayLines.name: .uint32(displayLines)])
    }

    /// Milliseconds on the monotonic clock the queue runs on.
    static func now() -> UInt64 { monotonicMicroseconds() / 1000 }

    // MARK: Requests

    func present(_ call: MethodCall, speechOnly: Bool) async throws -> ObjectPath {
        let (request, playedAudio) = speechOnly
            ? try AlertReader.speech(call)
            : (try AlertReader.alert(call), nil)
        var warnings: [String] = []
        var audio: [SpeechChunk] = []
        var files: [String: UnixFD] = [:]
        var missingFile: String?
        // Files the caller names are opened with the caller's rights (CallerFiles), as
        // the caller could: FILE chunks are kept open to be played, the images only tried.
        let caller = try await call.caller()
        func open(_ path: String) async -> Result<Int32, CallerFiles.Errno> {
            await callerFiles.run { CallerFiles.open(path, flags: O_RDONLY, as: caller.uid, caller: caller.uniqueName) }
        }
        for (index, chunk) in request.audio.enumerated() {
            if chunk.kind == .file, files[chunk.text] == nil {
                switch await open(chunk.text) {
                case .success(let fd):
                    files[chunk.text] = UnixFD(taking: fd)
                case .failure(let error):
                    let field = speechOnly ? "chunks[\(index)]" : "Audio[\(index)]"
                    if request.hasText {
                        warnings.append("\(field): cannot read \(chunk.text): \(error); skipped")
                    } else if missingFile == nil {
                        missingFile = "\(field): cannot read \(chunk.text): \(error)"
                    }
                    continue
                }
            }
            audio.append(chunk)
        }
        if request.playTone && request.audio.isEmpty { warnings.append("\(AlertsContract.Manager.Keys.playTone.name): ignored, the alert has no audio") }
        func readable(_ path: String) async -> CallerFiles.Errno? {
            switch await open(path) {
            case .success(let fd):
                close(fd)
                return nil
            case .failure(let error):
                return error
            }
        }
        if !request.icon.isEmpty, let error = await readable(request.icon) {
            warnings.append("Icon: cannot read \(request.icon): \(error)")
        }
        for (index, button) in request.softButtons.enumerated() where !button.image.isEmpty {
            if let error = await readable(button.image) {
                warnings.append("\(AlertsContract.Manager.Keys.softButtons.name)[\(index)].Image: cannot read \(button.image): \(error)")
            }
        }
        if missingFile == nil { await untilTheEndIsKnown(for: request.priority) }
        if missingFile == nil, request.priority < .emergency { await captureWatch.untilKnown(for: call.sender) }
        let captureRemaining = request.priority < .emergency && missingFile == nil ? captureWatch.remainingMs(for: call.sender) : nil

        let owner = call.sender
        let (alert, immediate) = try state.withLock { s throws(DBusError) -> (AlertObject, AlertEnd?) in
            let method = speechOnly ? AlertsContract.Manager.speak : AlertsContract.Manager.presentAlert
            if s.stopping { throw .failed("\(method.name): the service is stopping") }
            let id = s.nextID
            s.nextID += 1
            let lines = speechOnly ? [] : TextLayout.lines(request.texts, displayLines: Int(s.displayLines))
            let seconds = AlertTimeouts.effective(requested: request.timeoutSeconds, defaultTimeout: s.defaultTimeout,
                                                  hasButtons: !request.softButtons.isEmpty, buttonTimeout: s.buttonTimeout)
            let durationMs = speechOnly ? 0 : AlertTimeouts.milliseconds(seconds)
            let alert = try AlertObject(id: id, request: request, audio: audio, files: files, playedAudio: playedAudio, lines: lines,
                                        durationMs: durationMs, warnings: warnings, owner: owner, service: self)
            if let missingFile {
                alert.addWarning(missingFile)
                return (alert, AlertEnd(.fileNotFound))
            }
            let entry = AlertQueue.Entry(id: id, owner: owner, priority: request.priority, durationMs: durationMs,
                                         hasButtons: !speechOnly && !request.softButtons.isEmpty, hasAudio: !audio.isEmpty,
                                         endsWithOwner: !request.outliveOwner)
            // An end that is due counts now, however late its timer runs: a request made at
            // a try-again time finds the queue as that time promised.
            let now = Self.now()
            apply(s.queue.advance(now: now), to: &s)
            switch s.queue.submit(entry, now: now, captureRemainingMs: captureRemaining) {
            case .rejected(let end):
                return (alert, end)
            case .accepted(let events):
                s.alerts[id] = alert
                logger.info("alert \(id) of \(owner): \(request.priority.rawValue), \(speechOnly ? "speech only" : "\(lines.count) line(s), \(request.softButtons.count) button(s), \(seconds) s"), \(audio.count) audio chunk(s)",
                            metadata: ["alert": "\(id)", "caller": "\(owner)", "priority": "\(request.priority.rawValue)"])
                if !request.outliveOwner { watchOwner(owner, in: &s) }
                apply(events, to: &s)
                return (alert, nil)
            }
        }
        if let immediate {
            // Completed goes out after the reply, so the caller knows the path it names.
            call.afterReply { [self] in
                alert.complete(immediate)
                retire(alert)
            }
        }
        return alert.path
    }

    /// How long a request that the full queue would refuse waits for the presented alert's
    /// end to be known (its audio rendered to the end: tens of milliseconds after it is
    /// presented, seconds on a loaded machine), so that the refusal's TryAgainTimeMs is exact
    /// from the first moment. Well inside a D-Bus call's default 25 s timeout; past it the
    /// queue names a time at which it will know more (`AlertQueue.unknownEndRetryMs`).
    static let endWait: Duration = .seconds(10)

    /// Waits, up to `endWait`, while a request of `priority` would be refused for a full
    /// queue whose presented alert's end is not known yet. (Looked at every 5 ms: the wait is
    /// rare and bounded, and the request decides afresh after it.)
    private func untilTheEndIsKnown(for priority: AlertPriority) async {
        func unknown() -> Bool { state.withLock { $0.queue.isFull(for: priority) && $0.queue.expectedEnd == nil } }
        guard unknown() else { return }
        let started = ContinuousClock.now
        while unknown(), ContinuousClock.now < started + Self.endWait {
            try? await Task.sleep(for: .milliseconds(5))
        }
        let waited = ContinuousClock.now - started
        if unknown() {
            logger.warning("the presented alert's end is still not known after \(waited); a request behind the full queue is told to ask again in \(AlertQueue.unknownEndRetryMs) ms")
        } else if waited > .seconds(1) {
            logger.notice("a request behind the full queue waited \(waited) for the presented alert's end to be known")
        }
    }

    /// A method of an alert object: checks it may act now, then lets the queue act.
    func act(on alert: AlertObject, call: String, presentedOnly: Bool = false,
             _ body: @escaping (inout AlertQueue, UInt64) -> [AlertQueue.Event]) throws(DBusError) {
        try state.withLock { s throws(DBusError) in
            guard let placement = s.queue.placement(of: alert.id) else {
                throw .earshot(.rejected, "\(call): the alert has already finished")
            }
            if presentedOnly && placement != .presenting {
                throw .earshot(.rejected, "\(call): the alert is queued, not presented")
            }
            let events = body(&s.queue, Self.now())
            apply(events, to: &s)
        }
    }

    // MARK: Properties

    func setDefaultTimeout(_ value: DBusValue) throws -> DBusValue {
        guard case .double(let seconds) = value, seconds.isFinite else {
            throw DBusError.earshot(.invalidData, "\(AlertsContract.Manager.defaultTimeout.name): wanted a finite number of seconds")
        }
        let clamped = AlertTimeouts.clamped(seconds)
        state.withLock { $0.defaultTimeout = clamped }
        return .double(clamped)
    }

    func setButtonTimeout(_ value: DBusValue) throws -> DBusValue {
        let range = AlertTimeouts.buttonTimeoutRange
        guard case .double(let seconds) = value, range.contains(seconds) else {
            throw DBusError.earshot(.invalidData, "\(AlertsContract.Manager.buttonTimeout.name): \(value) is outside \(range.lowerBound)..\(range.upperBound) s")
        }
        state.withLock { $0.buttonTimeout = seconds }
        return .double(seconds)
    }

    func setDisplayLines(_ value: DBusValue) throws -> DBusValue {
        guard case .uint32(let lines) = value, lines <= 3 else {
            throw DBusError.earshot(.invalidData, "\(AlertsContract.Manager.displayLines.name): \(value) is outside 0..3")
        }
        state.withLock { $0.displayLines = lines }
        try? manager.withLock { try $0?.set(Manager.capabilities, Self.capabilities(displayLines: lines)) }
        return .uint32(lines)
    }

    // MARK: Events (under the state lock)

    private func apply(_ events: [AlertQueue.Event], to s: inout State) {
        // Completions are announced last, once Current and QueueLength are up to date.
        var completed: [(AlertObject, AlertEnd)] = []
        for event in events {
            switch event {
            case .presented(let id):
                guard let alert = s.alerts[id] else { continue }
                alert.presented()
                logger.info("alert \(id) presented")
                if !alert.audio.isEmpty {
                    let priority = alert.request.priority
                    // Focus by priority: VOICECOM and EMERGENCY silence other audio, the
                    // rest duck it. The audio starts once the session has made room for
                    // it (a change to the mixer made before the alert's stream joins it is
                    // heard at once; one made while the stream joins waits for the graph).
                    let claim = sessionClaims.claim(for: id, category: "playback", options: priority.silencesOthers ? [] : ["duckOthers"])
                    s.playbacks[id] = output.play(alert: id, chunks: alert.audio, files: alert.files, tone: alert.request.playTone,
                                                  role: priority.mediaRole, playedAudio: alert.playedAudio, logger: logger,
                                                  after: { await SessionClaims.answer(of: claim, within: Self.focusWait) },
                                                  started: { alert.started(atMonotonicUs: $0) },
                                                  playedOut: { [self] end in self.audioWillEnd(id, playedOutUs: end) }) { [self] warnings in
                        Task { self.audioEnded(id, warnings: warnings) }
                    }
                }
                for observer in observers.withLock({ $0 }) { observer.presented(alert) }
            case .buttonPressed(let id, let button):
                s.alerts[id]?.buttonPressed(button)
            case .completed(let id, let end):
                s.playbacks.removeValueShrinking(forKey: id)?.stop()
                sessionClaims.release(for: id)
                guard let alert = s.alerts.removeValueShrinking(forKey: id) else { continue }
                completed.append((alert, end))
            }
        }
        let current = s.queue.currentID.flatMap { s.alerts[$0]?.path } ?? .root
        try? manager.withLock {
            try $0?.set([(Manager.current, .objectPath(current)), (Manager.queueLength, .uint32(UInt32(s.queue.waitingCount)))])
        }
        for (alert, end) in completed {
            alert.complete(end)
            for observer in observers.withLock({ $0 }) { observer.completed(alert) }
            retire(alert)
        }
        rearm(&s)
    }

    /// One timer, for the queue's next deadline.
    private func rearm(_ s: inout State) {
        s.timer?.cancel()
        s.timer = nil
        if let current = s.queue.currentID { s.alerts[current]?.ends(atMonotonicUs: (s.queue.expectedEnd ?? 0) * 1000) }
        guard let deadline = s.queue.nextDeadline else { return }
        let wait = deadline > Self.now() ? deadline - Self.now() : 0
        s.timer = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(wait))
            guard !Task.isCancelled, let self else { return }
            self.state.withLock { s in self.apply(s.queue.advance(now: Self.now()), to: &s) }
        }
    }

    /// Another client's non-mixable activation interrupted alert `id`'s audio.
    func interrupted(_ id: UInt64) {
        state.withLock { s in
            let events = s.queue.interrupt(id, now: Self.now())
            if events.isEmpty {
                logger.info("alert \(id): interrupted, and plays on (EMERGENCY)")
            } else {
                logger.info("alert \(id): interrupted by another client's audio; it ends")
            }
            apply(events, to: &s)
        }
    }

    /// Alert `id`'s audio is rendered to its end and will have played out at `playedOutUs`.
    private func audioWillEnd(_ id: UInt64, playedOutUs: UInt64) {
        state.withLock { s in
            s.queue.audioWillEnd(id, playedOut: (playedOutUs + 999) / 1000)
            apply([], to: &s)
        }
    }

    private func audioEnded(_ id: UInt64, warnings: [String]) {
        state.withLock { s in
            guard s.playbacks.removeValue(forKey: id) != nil else { return }
            if let alert = s.alerts[id] { warnings.forEach(alert.addWarning) }
            sessionClaims.release(for: id)
            apply(s.queue.audioEnded(id, now: Self.now()), to: &s)
        }
    }

    private func watchOwner(_ owner: String, in s: inout State) {
        guard s.watchedOwners.insert(owner).inserted else { return }
        Task { [weak self] in
            guard let self, let owners = try? await self.connection.watchNameOwner(owner) else { return }
            for await current in owners where current == nil {
                self.logger.info("\(owner) left the bus: its alerts end")
                self.state.withLock { s in
                    s.watchedOwners.remove(owner)
                    self.apply(s.queue.ownerVanished(owner, now: Self.now()), to: &s)
                }
                return
            }
        }
    }

    /// A finished alert's object stays for the linger time, then leaves the bus.
    private func retire(_ alert: AlertObject) {
        let linger = settings.linger
        Task { await Lingering.leave(after: linger) { alert.unexport() } }
    }

    /// Ends everything on shutdown: the audio stops, and every alert, waiting or presented,
    /// completes with `ABORTED` (`cancelled`), so that its owner hears of it before the
    /// service leaves the bus. No alert is accepted afterwards.
    func shutdown() {
        state.withLock { s in
            s.stopping = true
            s.timer?.cancel()
            s.timer = nil
            for playback in s.playbacks.values { playback.stop() }
            s.playbacks.removeAll()
            // The waiting ones first, so that ending the presented one brings up no other.
            let now = Self.now()
            var events: [AlertQueue.Event] = []
            for id in s.alerts.keys.sorted() where s.queue.placement(of: id) == .queued {
                events += s.queue.cancel(id, now: now)
            }
            if let current = s.queue.currentID { events += s.queue.cancel(current, now: now) }
            apply(events, to: &s)
        }
        captureWatch.stop()
    }
}
