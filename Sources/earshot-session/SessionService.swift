import ContractCore
import EarshotALSA
import EarshotContract
import EarshotDBus
import EarshotPipeWire
import EarshotService
import EarshotSync
import FoundationEssentials
import Logging
import SessionCore

/// The audio session on the bus: the desired state, applied to ALSA in the contract's
/// order on the ALSA worker, kept on disk, mirrored in properties, and re-applied when
/// routes change, interruptions end or the media services reset (with `KeepEnforced`).
///
/// Every change of state happens on the ALSA worker, one at a time, so applies, rescans
/// and activations never interleave and their signals leave in order.
final class SessionService: Sendable {
    typealias Manager = SessionContract.Manager
    typealias Activation = SessionContract.Activation

    struct Settings: Sendable {
        var outputDevice: String
        var stateFile: StateFile
        var linger: Duration
        var systemBus: Bool
        var environment: [String: String]
        /// `auto`, `inotify` or `poll`.
        var routeWatch: String
        var mixer: MixerChoice
        /// Which roles the focus policy may touch (`--policy`, else the standard table).
        var roles: RoleTable
        var policyPath: String?
        /// What the service has changed on the mixer, for restoring after a crash.
        /// Where releases before software levels kept what they had lowered; removed.
        var earlierLedgerPath: String
    }

    /// Hints used when the desired state gives none.
    static let defaultSampleRate = 48000.0
    static let defaultIOBufferDuration = 0.02

    /// The id of the session's own activation (the desired state's `Active`).
    static let sessionActivation: UInt64 = 0

    struct ActivationHandle: Sendable {
        let object: ExportedObject
        let owner: String
        let ownerWatch: Task<Void, Never>
        /// The owner's process id (0 when the bus would not say): its streams are the
        /// activation's own.
        let process: Int32
        /// The `AudioStream` the activation named: a mixer node that is its own too.
        let audioStream: String?
    }

    struct State: Sendable {
        var desired = DesiredState.initial
        var keepEnforced = true
        var applied: AppliedState
        var inputs: [InputDescription] = []
        var book = ActivationBook()
        var handles: [UInt64: ActivationHandle] = [:]
        var nextActivation: UInt64 = 1
        /// The capture service has been on the bus, and has left it since.
        var captureSeen = false
        var captureLost = false
        /// `pipewire` once attached to a mixer, else `none`.
        var mixerName = "none"
        var mixerView = MixerView()
        var duckLevel = SessionService.defaultDuckLevel
        /// The `Streams` property as last computed.
        var streams: DBusValue = .vardicts([])
        var stoppingMixer = false
    }

    let connection: DBusConnection
    let settings: Settings
    let logger: Logger
    /// The one thread that does the session's ALSA and disk work, in order: scans, probes,
    /// negotiations and state-file writes never run on the bus thread, and libasound's
    /// global configuration is only ever touched from here.
    let worker = BlockingQueue(label: "earshot-session.alsa", concurrent: false)
    let state: Locked<State>
    let managerObject = Locked<ExportedObject?>(nil)
    let tasks = BackgroundTasks()
    let routeWatcher = Locked<(any RouteChangeSource)?>(nil)
    /// Set on the worker when the service stops: later changes are refused.
    let stopping = Locked(false)
    /// The system mixer, when one is in use.
    let mixer = Locked<PipeWireMixer?>(nil)
    /// With `--mixer auto` and no PipeWire daemon yet: the watch for its socket.
    let mixerWatcher = Locked<RouteWatcher?>(nil)

    init(connection: DBusConnection, settings: Settings, logger: Logger) {
        self.connection = connection
        self.settings = settings
        self.logger = logger
        let applied = AppliedState(configuration: DesiredState.initial.configuration, sampleRate: Self.defaultSampleRate,
                                   ioBufferDuration: Self.defaultIOBufferDuration, input: "", output: settings.outputDevice,
                                   dataSourceName: "", polarPattern: .omnidirectional, channels: 0, orientation: .none,
                                   active: false)
        state = Locked(State(applied: applied))
    }

    // MARK: Life

    func start() async throws {
        if let policy = settings.policyPath {
            let changes = settings.roles.changes(from: .standard)
            logger.notice(changes.isEmpty ? "policy \(policy): the standard role table, unchanged"
                                           : "policy \(policy) changes the standard role table: \(changes.joined(separator: "; "))")
        }
        await worker.run { self.loadAndApply() }
        startMixer()
        let object = try connection.export(SessionInterfaces.managerPath,
                                           interfaces: [SessionInterfaces.managerInterface(self)],
                                           properties: [SessionInterfaces.Manager.interface.name: managerProperties()])
        managerObject.withLock { $0 = object }
        // Mixer events handled while the object was being exported published nothing.
        await worker.run { self.publish() }
        try startFollowingRoutes()
        try await startFollowingCapture()
    }

    /// Runs once the calls under way (a `SetDesiredState` saved and answered) have finished:
    /// stops following routes and owners, then lets the worker finish what is queued and
    /// refuses what comes after.
    func shutdown() async {
        routeWatcher.withLock { $0?.stop() }
        stopWatchingForPipeWire()
        tasks.cancelAll()
        state.withLock { state in
            state.handles.values.forEach { $0.ownerWatch.cancel() }
        }
        let drained = await GracePeriod.wait(.seconds(3)) {
            await self.worker.run {
                self.stopping.withLock { $0 = true }
                self.stopMixer()
            }
        }
        if !drained {
            stopping.withLock { $0 = true }
            logger.warning("the ALSA worker is still busy at exit")
        }
    }

    /// Reads the state file and applies what it holds (on the worker, at start).
    private func loadAndApply() {
        do {
            if let contents = try settings.stateFile.load() {
                state.withLock {
                    $0.desired = contents.desired
                    $0.keepEnforced = contents.keepEnforced
                    $0.duckLevel = contents.duckLevel ?? Self.defaultDuckLevel
                }
                logger.info("desired state read from \(settings.stateFile.path)")
            }
        } catch {
            logger.error("cannot read the state file \(settings.stateFile.path) (\(error)); starting from the default state")
        }
        let inputs = InputScanner.scan()
        state.withLock { $0.inputs = inputs }
        logger.info("inputs: \(inputs.isEmpty ? "none" : inputs.map(\.name).joined(separator: ", "))")
        let outcome = apply()
        if let failure = outcome.failure {
            logger.warning("the stored desired state does not apply yet: \(failure.violation)")
        }
    }

    // MARK: Applying (on the worker)

    /// Applies the desired state to ALSA, updates the values in force and the session's own
    /// activation, and publishes the properties. Call only on the worker.
    @discardableResult
    func apply() -> ApplyOutcome {
        let (desired, previous, inputs) = state.withLock { ($0.desired, $0.applied, $0.inputs) }
        let system = ALSAAudioSystem(inputs: inputs, previous: previous,
                                     rateHint: desired.sampleRate ?? Self.defaultSampleRate,
                                     periodHint: desired.ioBufferDuration ?? Self.defaultIOBufferDuration, logger: logger)
        let outcome = SessionApplier.apply(desired, from: previous, to: system)
        let events = state.withLock { state -> [ActivationBook.Event] in
            state.applied = outcome.state
            var events: [ActivationBook.Event] = []
            let held = state.book[Self.sessionActivation]
            let wanted = outcome.state.active
            if held != nil, !wanted || held?.configuration != desired.configuration {
                events += state.book.deactivate(id: Self.sessionActivation)
            }
            if wanted, state.book[Self.sessionActivation] == nil {
                events += state.book.activate(id: Self.sessionActivation, owner: "", configuration: desired.configuration)
            }
            return events
        }
        if let failure = outcome.failure {
            logger.info("applied up to \(failure.step.rawValue), which failed: \(failure.violation)")
        } else {
            let applied = outcome.state
            logger.debug("applied: \(applied.configuration.category.rawValue) on '\(applied.input)', \(applied.sampleRate) Hz, \(applied.ioBufferDuration) s, \(applied.channels) ch")
        }
        dispatch(events)
        publish()
        return outcome
    }

    /// Re-applies after `reason` and reports it with `Reapplied`. Call only on the worker.
    func reapply(_ reason: String) {
        let outcome = apply()
        let error = outcome.failure.map { DBusError($0.violation) }
        if let error {
            logger.warning("re-applying after \(reason) failed: \(error.description)")
        } else {
            logger.info("re-applied the desired state after \(reason)")
        }
        emit(Manager.reapplied, [.string(reason), .boolean(error == nil), .string(error?.description ?? "")])
    }

    /// Properties of the manager, as they are now.
    func managerProperties() -> [String: DBusValue] {
        state.withLock { state in
            var values = SessionValues.state(desired: state.desired, applied: state.applied,
                                             active: Self.sessionActive(state), keepEnforced: state.keepEnforced)
            values[Manager.desiredState.name] = SessionValues.desired(state.desired)
            values[Manager.route.name] = SessionValues.route(state.applied, mixer: state.mixerView)
            values[Manager.mixer.name] = .string(state.mixerName)
            values[Manager.duckLevel.name] = .double(state.duckLevel)
            values[Manager.streams.name] = state.streams
            return values
        }
    }

    /// The session is active when its activation is held and not interrupted.
    static func sessionActive(_ state: State) -> Bool {
        guard let held = state.book[sessionActivation] else { return false }
        return state.applied.active && !held.interrupted
    }

    func publish() {
        guard let object = managerObject.withLock({ $0 }) else { return }
        do {
            try object.setProperties(managerProperties(), interface: SessionInterfaces.Manager.interface.name)
        } catch {
            logger.error("cannot publish the session state: \(error.description)")
        }
    }

    func emit(_ signal: SignalDeclaration, _ arguments: [DBusValue] = [], to destination: String? = nil) {
        guard let object = managerObject.withLock({ $0 }) else { return }
        do {
            try object.emit(signal, arguments, to: destination)
        } catch {
            logger.error("cannot emit \(signal.name): \(error.description)")
        }
    }

    func save() {
        let contents = state.withLock {
            StateFile.Contents(desired: $0.desired, keepEnforced: $0.keepEnforced, duckLevel: $0.duckLevel)
        }
        do {
            try settings.stateFile.save(contents)
        } catch {
            logger.error("cannot save the state to \(settings.stateFile.path): \(error); it holds until the service stops")
        }
    }

    // MARK: Methods

    /// `SetDesiredState`: a request that breaks a rule changes nothing; one that reads
    /// well becomes the desired state (kept, saved and re-applied later even when the
    /// audio system refuses part of it now), and the first step the system refuses is the
    /// reply.
    func setDesiredState(_ call: MethodCall) async throws {
        let desired = try SessionRequest.desiredState(call)
        let failure = try await worker.run { () throws(DBusError) -> RuleViolation? in
            guard !self.stopping.withLock({ $0 }) else {
                throw .failed("\(SessionContract.Manager.setDesiredState.name): the service is stopping; the desired state is unchanged")
            }
            let previous = self.state.withLock { state -> AppliedState in
                state.desired = desired
                return state.applied
            }
            self.save()
            let outcome = self.apply()
            if outcome.state.input != previous.input {
                self.emit(Manager.routeChanged, [.string(RouteChangeReason.override.rawValue), SessionValues.route(previous, mixer: self.state.withLock { $0.mixerView })])
            } else if outcome.state.configuration.category != previous.configuration.category {
                self.emit(Manager.routeChanged, [.string(RouteChangeReason.categoryChange.rawValue), SessionValues.route(previous, mixer: self.state.withLock { $0.mixerView })])
            }
            return outcome.failure?.violation
        }
        if let failure {
            throw DBusError(RuleViolation(copying: failure,
                                          failure.rule + " (the desired state is kept and re-applied when routes change)"))
        }
        logger.info("desired state set by \(call.sender): \(desired.configuration.category.rawValue)")
    }

    func currentState() -> [String: DBusValue] {
        var values = managerProperties()
        for property in [SessionContract.Manager.desiredState, SessionContract.Manager.mixer, SessionContract.Manager.duckLevel, SessionContract.Manager.streams] { values[property.name] = nil }
        return values
    }

    func listInputs() async -> DBusValue {
        let inputs = await worker.run { InputScanner.scan(previous: self.state.withLock { $0.inputs }) }
        return .array(.dictionary(key: .string, value: .variant), inputs.map(SessionValues.input))
    }

    func setKeepEnforced(_ value: DBusValue) async throws -> DBusValue {
        guard let keep = value.boolValue else { throw DBusError.invalidArgs("\(SessionContract.Manager.keepEnforced.name): got \(value.type), wanted b") }
        try await worker.run { () throws(DBusError) in
            guard !self.stopping.withLock({ $0 }) else {
                throw .failed("\(SessionContract.Manager.keepEnforced.name): the service is stopping; it is unchanged")
            }
            self.state.withLock { $0.keepEnforced = keep }
            self.save()
        }
        logger.info("\(SessionContract.Manager.keepEnforced.name) is now \(keep)")
        return .boolean(keep)
    }
}
