import EarshotContract
import EarshotDBus
import EarshotPipeWire
import EarshotService
import FoundationEssentials
import SessionCore

/// What the system mixer shows the session: its playback streams, the processes behind
/// them, its sinks and sources and the defaults among them.
struct MixerView: Sendable {
    var nodes: [UInt32: PipeWireNode] = [:]
    var clients: [UInt32: MixerClient] = [:]
    var defaultSink: String?
    var defaultSource: String?
    var attached = false
    /// It was attached and lost the daemon since: the next attachment is a media-services
    /// reset.
    var lost = false

    /// Playback streams whose level is known, with the process behind each: its client's,
    /// which the daemon read from the socket; else, and for a client that is a proxy for
    /// programs of its own (pipewire-pulse), what the stream says.
    var streams: [MixerStream] {
        nodes.values.filter { $0.kind == .playback && $0.volume != nil }.sorted { $0.id < $1.id }.map { node in
            let client = clients[node.clientID]
            let pid = client.flatMap { $0.pid > 0 && !($0.proxy && node.pid > 0) ? $0.pid : nil } ?? node.pid
            return MixerStream(id: node.id, serial: node.serial, application: node.application, role: node.role, pid: pid,
                               nodeName: node.name, streamKey: node.streamKey, volume: node.volume ?? 1, muted: node.muted,
                               channelVolumes: node.channelVolumes, softVolumes: node.softVolumes, softMuted: node.softMuted)
        }
    }

    var devices: Set<String> {
        Set(nodes.values.filter { $0.kind == .sink || $0.kind == .source }.map(\.name))
    }
}

/// A client of the system mixer: the process behind it, and whether it is a proxy for
/// programs of its own (pipewire-pulse).
struct MixerClient: Sendable {
    var pid: Int32
    var proxy: Bool
}

/// Which system mixer the session enforces its focus policy on.
enum MixerChoice: String, Sendable, CaseIterable {
    case auto, pipewire, none
}

/// Audio focus made real on the system mixer (PipeWire): other audio is ducked or muted
/// in each stream's software levels (`SoftLevels`) while activations ask for it, and
/// restored when they end, when the service stops, and after a crash, at the next start,
/// from what the streams themselves show. Mixer events arrive on PipeWire's thread and are
/// handled on the worker, in order, like every other change of state.
extension SessionService {
    static let defaultDuckLevel = 0.3

    /// Decides on a mixer and attaches. `auto` attaches to PipeWire when its daemon answers
    /// now, else as soon as its socket appears (watched with inotify: no polling at rest).
    func startMixer() {
        switch settings.mixer {
        case .none:
            return
        case .pipewire:
            attachMixer()
        case .auto:
            if PipeWireMixer.daemonAnswers() {
                attachMixer()
            } else if let socket = PipeWireMixer.socketPath() {
                logger.info("no PipeWire daemon answers at \(socket) yet: the focus policy applies to other programs' audio once one does")
                watchForPipeWire(at: socket)
            } else {
                logger.info("neither PIPEWIRE_RUNTIME_DIR nor XDG_RUNTIME_DIR is set: no PipeWire daemon to attach to (--mixer none)")
            }
        }
    }

    /// Watches the socket's directory (and that directory in its parent) until a daemon
    /// answers on `socket`, then attaches.
    private func watchForPipeWire(at socket: String) {
        let directory = Self.directory(of: socket)
        do {
            let watcher = try RouteWatcher(files: [socket, directory], directories: [])
            mixerWatcher.withLock { $0 = watcher }
            watcher.start { [weak self] in
                guard let self else { return }
                self.worker.enqueue { self.pipeWireSocketChanged(watcher, socket: socket) }
            }
        } catch {
            logger.warning("cannot watch for PipeWire at \(socket) (\(error)): going on without a system mixer")
        }
    }

    /// On the worker: attaches once a daemon answers; when only the socket's directory has
    /// appeared, watches inside it from now on.
    private func pipeWireSocketChanged(_ watcher: RouteWatcher, socket: String) {
        guard mixerWatcher.withLock({ $0 }) === watcher, !stopping.withLock({ $0 }) else { return }
        if PipeWireMixer.daemonAnswers() {
            stopWatchingForPipeWire()
            logger.info("a PipeWire daemon answers at \(socket)")
            attachMixer()
        } else if watcher.watchCount < 2, FileManager.default.fileExists(atPath: Self.directory(of: socket)) {
            stopWatchingForPipeWire()
            watchForPipeWire(at: socket)
        }
    }

    private static func directory(of path: String) -> String {
        path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
    }

    func stopWatchingForPipeWire() {
        mixerWatcher.withLock { watcher in
            watcher?.stop()
            watcher = nil
        }
    }

    private func attachMixer() {
        removeEarlierLedger()
        do {
            let mixer = try PipeWireMixer(clientName: "earshot-session") { [weak self] event in
                guard let self else { return }
                self.worker.enqueue { self.mixerEvent(event) }
            }
            self.mixer.withLock { $0 = mixer }
            state.withLock { $0.mixerName = "pipewire" }
            logger.info("system mixer: PipeWire (role table: \(settings.roles == .standard ? "standard" : settings.policyPath ?? "given"))")
            // Events the worker handled before the mixer was set here (the streams the daemon
            // listed at once) found no mixer to enforce on: enforced now, after them.
            worker.enqueue { self.enforceFocus() }
        } catch {
            logger.error("cannot start the PipeWire client (\(error)); going on without a system mixer")
        }
    }

    /// Gives every stream its own level back, waits for the daemon to have it, and
    /// detaches. Call only on the worker.
    func stopMixer() {
        guard let mixer = mixer.withLock({ $0 }) else { return }
        let commands = state.withLock { state -> [MixerCommand] in
            state.stoppingMixer = true
            return SoftLevels.plan(streams: state.mixerView.streams, treatments: [:], duckLevel: state.duckLevel)
        }
        send(commands, to: mixer)
        if !commands.isEmpty {
            logger.info(mixer.sync(timeout: .seconds(1))
                ? "restored \(commands.count) stream(s) on the system mixer"
                : "the system mixer did not confirm restoring \(commands.count) stream(s) within 1 s")
        }
        mixer.close()
        self.mixer.withLock { $0 = nil }
    }

    // MARK: Events (on the worker)

    func mixerEvent(_ event: PipeWireEvent) {
        guard !state.withLock({ $0.stoppingMixer }) else { return }
        switch event {
        case .attached:
            let wasLost = state.withLock { state -> Bool in
                state.mixerView.attached = true
                defer { state.mixerView.lost = false }
                return state.mixerView.lost
            }
            let view = state.withLock { $0.mixerView }
            logger.info("attached to PipeWire: \(view.streams.count) playback stream(s), default sink \(view.defaultSink ?? "none"), default source \(view.defaultSource ?? "none")")
            let lowered = view.streams.filter(SoftLevels.lowered)
            if !lowered.isEmpty, state.withLock({ $0.book.activations.isEmpty }) {
                logger.info("\(lowered.count) stream(s) were left lowered by an earlier run: restoring them")
            }
            if wasLost {
                logger.info("media services reset: the PipeWire daemon is back")
                if !view.devices.isEmpty { routeChanged(.newDeviceAvailable, previous: nil) }
                emit(Manager.mediaServicesReset)
                if state.withLock({ $0.keepEnforced }) { reapply("mediaServicesReset") }
            }
        case .detached(let why):
            let wasAttached = state.withLock { state -> Bool in
                defer {
                    state.mixerView.attached = false
                    state.mixerView.nodes = [:]
                    state.mixerView.clients = [:]
                }
                if state.mixerView.attached { state.mixerView.lost = true }
                return state.mixerView.attached
            }
            if wasAttached {
                logger.warning("lost the PipeWire daemon (\(why)); attaching again when it is back")
            } else {
                logger.info("PipeWire: \(why); trying again")
            }
        case .node(let node):
            let (isNew, attached) = state.withLock { state -> (Bool, Bool) in
                defer { state.mixerView.nodes[node.id] = node }
                return (state.mixerView.nodes[node.id] == nil, state.mixerView.attached)
            }
            if isNew, attached, node.kind == .sink || node.kind == .source {
                logger.info("PipeWire \(node.kind == .sink ? "sink" : "source") \(node.name) appeared")
                routeChanged(.newDeviceAvailable, previous: nil)
            }
            if isNew, node.kind == .playback {
                logger.debug("playback stream \(node.id): \(node.application) (\(node.role.isEmpty ? "no role" : node.role))")
            }
        case .nodeRemoved(let id):
            let (removed, attached, previous) = state.withLock { state in
                (state.mixerView.nodes.removeValue(forKey: id), state.mixerView.attached, state.applied)
            }
            if let removed, attached, removed.kind == .sink || removed.kind == .source {
                logger.info("PipeWire \(removed.kind == .sink ? "sink" : "source") \(removed.name) went away")
                routeChanged(.oldDeviceUnavailable, previous: previous)
            }
        case .client(let id, let pid, _, let proxy):
            state.withLock { $0.mixerView.clients[id] = MixerClient(pid: pid, proxy: proxy) }
        case .clientRemoved(let id):
            state.withLock { _ = $0.mixerView.clients.removeValue(forKey: id) }
        case .defaultSink(let name):
            let previous = state.withLock { state -> AppliedState? in
                defer { state.mixerView.defaultSink = name }
                return state.mixerView.attached && state.mixerView.defaultSink != name ? state.applied : nil
            }
            if let previous { routeChanged(.routeConfigurationChange, previous: previous) }
        case .defaultSource(let name):
            let previous = state.withLock { state -> AppliedState? in
                defer { state.mixerView.defaultSource = name }
                return state.mixerView.attached && state.mixerView.defaultSource != name ? state.applied : nil
            }
            if let previous { routeChanged(.routeConfigurationChange, previous: previous) }
        case .link, .linkRemoved:
            return  // not followed
        }
        enforceFocus()
    }

    private func routeChanged(_ reason: RouteChangeReason, previous: AppliedState?) {
        let route = state.withLock { state in
            SessionValues.route(previous ?? state.applied, mixer: state.mixerView)
        }
        emit(Manager.routeChanged, [.string(reason.rawValue), route])
        publish()
    }

    // MARK: The policy

    /// Brings every stream to what the live activations ask of it, and publishes
    /// `Streams`. Call only on the worker, after any change of activations, streams,
    /// processes or `DuckLevel`. With `confirmed`, returns once the daemon has the changes
    /// (at most 100 ms), so that a client told its activation is applied can start its
    /// audio after the other streams have been lowered.
    func enforceFocus(confirmed: Bool = false) {
        guard let mixer = mixer.withLock({ $0 }) else { return }
        let roles = settings.roles
        let commands = state.withLock { state -> [MixerCommand] in
            guard !state.stoppingMixer else { return [] }
            let streams = state.mixerView.streams
            let claims = state.book.activations.values.sorted { $0.id < $1.id }.compactMap { activation -> FocusClaim? in
                // The session's own activation names no audio of its own.
                guard activation.id != Self.sessionActivation, let handle = state.handles[activation.id] else { return nil }
                return FocusClaim.of(activation: activation.id, configuration: activation.configuration,
                                     interrupted: activation.interrupted,
                                     ownProcesses: handle.process > 0 ? [handle.process] : [],
                                     ownNodes: handle.audioStream.map { [$0] } ?? [])
            }
            let treatments = FocusPolicy.treatments(of: streams, claims: claims, roles: roles)
            state.streams = SessionValues.streams(streams, treatments: treatments)
            return SoftLevels.plan(streams: streams, treatments: treatments, duckLevel: state.duckLevel)
        }
        send(commands, to: mixer)
        if confirmed, !commands.isEmpty, !mixer.sync(timeout: .milliseconds(100)) {
            logger.warning("the system mixer did not confirm \(commands.count) change(s) within 100 ms")
        }
        publish()
    }

    private func send(_ commands: [MixerCommand], to mixer: PipeWireMixer) {
        for command in commands {
            do {
                try mixer.setSoft(command.stream, volumes: command.volumes, muted: command.muted)
                logger.debug("stream \(command.stream): software levels \(command.volumes), mute \(command.muted)")
            } catch {
                logger.warning("\(error)")
            }
        }
    }

    // MARK: DuckLevel

    func setDuckLevel(_ value: DBusValue) async throws -> DBusValue {
        guard let level = value.doubleValue ?? value.integerValue.map(Double.init) else {
            throw DBusError.invalidArgs("\(SessionContract.Manager.duckLevel.name): got \(value.type), wanted d")
        }
        guard level.isFinite, (0...1).contains(level) else {
            throw DBusError.earshot(.invalidData, "\(SessionContract.Manager.duckLevel.name): \(level) is outside 0..1 (a linear gain)")
        }
        try await worker.run { () throws(DBusError) in
            guard !self.stopping.withLock({ $0 }) else {
                throw .failed("\(SessionContract.Manager.duckLevel.name): the service is stopping; it is unchanged")
            }
            self.state.withLock { $0.duckLevel = level }
            self.save()
            self.enforceFocus()
        }
        logger.info("\(SessionContract.Manager.duckLevel.name) is now \(level)")
        return .double(level)
    }

    // MARK: Releases before software levels

    /// Releases before software levels kept a ledger of the streams they had lowered
    /// beside the state file; nothing reads it now.
    private func removeEarlierLedger() {
        let path = settings.earlierLedgerPath
        guard FileManager.default.fileExists(atPath: path) else { return }
        do {
            try FileManager.default.removeItem(atPath: path)
            logger.info("removed \(path), an earlier release's record of lowered streams (streams now show it themselves)")
        } catch {
            logger.warning("cannot remove \(path), an earlier release's record of lowered streams: \(error)")
        }
    }
}
