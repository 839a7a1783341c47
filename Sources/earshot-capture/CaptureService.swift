import CaptureCore
import EarshotALSA
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotService
import EarshotSpeechProcessing
import FoundationEssentials
import Logging

/// The capture service: one pass-thru at a time, on one ALSA capture device.
final class CaptureService: Sendable {
    private typealias Manager = CaptureContract.Manager

    struct Settings: Sendable {
        var device: String
        var pacing: CapturePacing
        var linger: Duration
        var channels: UInt32
        var systemBus: Bool
        /// Take the input, its channels and buffer duration from the audio session service
        /// when it names an input.
        var followSession: Bool
        /// The ALSA PCM that hears what the speakers play, for `EchoCancel`; nil: none.
        var echoReference: String? = nil
    }

    /// Where a pass-thru records from: the session's input, or the configured device.
    struct Input: Sendable {
        let device: String
        let channels: UInt32
        /// The session's IO buffer duration: an upper bound for the ALSA period.
        let periodLimitSeconds: Double?
        let fromSession: Bool
    }

    private struct State {
        var active: PassThruSession?
        var starting = false
        var nextID: UInt64 = 1
    }

    let connection: DBusConnection
    let settings: Settings
    let logger: Logger
    let sessionClaims: SessionClaims
    private let state = Locked(State())
    private let manager = Locked<ExportedObject?>(nil)
    /// The input `Device` and `Capabilities` describe, and a count of refreshes started (a
    /// slower, older refresh does not overwrite a newer one).
    private let described = Locked<(input: (device: String, channels: UInt32), generation: UInt64)>((("", 0), 0))
    /// Where inputs are probed: opening a PCM may take a while.
    private let probes = BlockingQueue(label: "earshot-capture.probe", concurrent: false)
    /// Whether the session service has left the bus since capture first read its input.
    private let sessionLeft = Locked(false)
    /// The echo delays pass-thrus have measured, for the next pass-thru on the same path.
    let echoDelays = Locked(EchoDelayMemory())

    init(connection: DBusConnection, settings: Settings, logger: Logger) {
        self.connection = connection
        self.settings = settings
        self.logger = logger
        sessionClaims = SessionClaims(connection: connection, subject: "pass-thru", logger: logger)
    }

    /// Exports the manager object, with the capabilities probed from the device.
    func start() throws(DBusError) {
        let object = try connection.export(CaptureInterfaces.managerPath, interfaces: [CaptureInterfaces.managerInterface(self)], values: [
            (Manager.capabilities, Self.capabilities(of: settings.device, channels: settings.channels,
                                                     echoReference: settings.echoReference != nil, logger: logger)),
            (Manager.device, .string(settings.device)),
            (Manager.active, .objectPath(.root)),
            (Manager.endsAtMonotonicUs, .uint64(0)),
        ])
        manager.withLock { $0 = object }
        described.withLock { $0.input = (settings.device, settings.channels) }
    }

    /// Keeps `Device` and `Capabilities` on the input the next pass-thru will use: the
    /// audio session's as its route changes and as that service comes and goes, else
    /// `--device`. Call once, at start.
    func followInput() async {
        guard settings.followSession else { return }
        let session = SessionProxy(connection: connection, timeout: .milliseconds(500))
        let routes: AsyncStream<[String: DBusValue]?>
        let channels: AsyncStream<UInt32?>
        do {
            // The route's first reading asks the session, and so starts it when it is
            // activatable (the services start one another on demand).
            routes = try await session.observe(.route, startingService: true)
            channels = try await session.observe(.channels)
        } catch {
            logger.warning("cannot follow the audio session's input: \(error)")
            return
        }
        // A session that leaves (nil) is not asked again until it is back: asking would
        // start it anew through the bus, ahead of systemd's own restart of a unit that failed.
        Task { [weak self] in
            var first = true
            for await route in routes {
                guard let self else { return }
                if !first { self.sessionLeft.withLock { $0 = route == nil } }
                await self.describeInput(askingSession: first || route != nil)
                first = false
            }
        }
        Task { [weak self] in
            for await count in channels where count != nil {
                guard let self else { return }
                await self.describeInput()
            }
        }
    }

    /// Probes the input in use now (off the cooperative pool) and publishes it when it
    /// changed; `askingSession` false: the session has left, and `--device` is used. An
    /// input the active pass-thru holds open cannot be probed: what it was last found to do
    /// stands.
    private func describeInput(askingSession: Bool = true) async {
        // Following the session never starts it: its first reading did, and one that left
        // (even while this refresh was on its way) is systemd's to restart.
        let input = askingSession ? await currentInput(startingSession: false) : deviceInput
        guard let generation = described.withLock({ state -> UInt64? in
            guard state.input != (input.device, input.channels) else { return nil }
            state.generation += 1
            return state.generation
        }) else { return }
        let logger = self.logger
        let echoReference = settings.echoReference != nil
        let (capabilities, busy) = await probes.run {
            let capabilities = Self.capabilities(of: input.device, channels: input.channels, echoReference: echoReference, logger: logger)
            return (capabilities, capabilities.arrayValue?.isEmpty == true && CaptureDevice.isBusy(input.device))
        }
        // Busy: probed again when the pass-thru ends.
        let current = !busy && described.withLock { state -> Bool in
            guard state.generation == generation else { return false }
            state.input = (input.device, input.channels)
            return true
        }
        guard current else { return }
        try? manager.withLock {
            try $0?.set([(Manager.device, .string(input.device)), (Manager.capabilities, capabilities)])
        }
        logger.info("the next pass-thru records from \(input.device)\(input.fromSession ? " (the session's input)" : "")")
    }

    /// What the device accepts, as SDL's AudioPassThruCapabilities: one entry per
    /// sampling rate and sample width, with the speech processing a pass-thru at that rate
    /// may ask for on `channels` (the plugin looked for, not loaded), `EchoCancel` with an
    /// `echoReference`.
    static func capabilities(of device: String, channels: UInt32, echoReference: Bool, logger: Logger) -> DBusValue {
        typealias Keys = CaptureContract.Manager.CapabilityKeys
        do {
            let probed = try CaptureDevice.probe(device)
            let installed = SpeechProcessor.isInstalled()
            logger.info("capture device \(device): \(probed.sampleRates.map(String.init).joined(separator: ", ")) Hz, \(probed.bitsPerSample.map(String.init).joined(separator: "/")) bit, \(probed.channels.lowerBound)..\(probed.channels.upperBound) channels; speech processing \(installed ? "installed" : "not installed")")
            return .vardicts(probed.sampleRates.flatMap { rate in
                // On a device that cannot give the channels in use, no pass-thru records at all.
                let processing = PassThruRules.processing(rate: rate, channels: probed.channels.contains(channels) ? channels : 0,
                                                          installed: installed, echoReference: echoReference)
                return probed.bitsPerSample.map { bits -> [String: DBusValue] in
                    [Keys.samplingRate.name: .uint32(rate), Keys.bitsPerSample.name: .uint32(bits), Keys.audioType.name: .string("PCM"),
                     Keys.noiseSuppression.name: .strings(processing.noiseSuppression.map(\.rawValue)),
                     Keys.bargeIn.name: .boolean(processing.bargeIn), Keys.echoCancel.name: .boolean(processing.echoCancel)]
                }
            })
        } catch {
            logger.warning("cannot probe capture device \(device): \(error)")
            return .vardicts([])
        }
    }

    // MARK: Requests

    func perform(_ call: MethodCall) async throws -> ObjectPath {
        var request = try RequestReader.read(call)
        let referenced = settings.echoReference != nil
        try DBusError.readingRequest { try PassThruRules.checkEchoReference(request, configured: referenced) }
        let id = try state.withLock { s throws(DBusError) -> UInt64 in
            if let active = s.active {
                throw .earshot(.rejected, "a pass-thru is already active (\(active.path), \(active.remainingMs) ms remaining)")
            }
            if s.starting { throw .earshot(.rejected, "another pass-thru is starting") }
            s.starting = true
            defer { s.nextID += 1 }
            return s.nextID
        }
        var output: WaveOutput?
        do {
            // The bus starts a session service that is not running yet; one that left is
            // systemd's to restart.
            let input = await currentInput(startingSession: !sessionLeft.withLock { $0 })
            request.channels = input.channels
            if let path = request.outputPath {
                // Created with the caller's permissions (its uid on the bus).
                let caller = try await call.caller()
                output = try WaveOutput(path: path, uid: caller.uid, caller: caller.uniqueName, rate: request.samplingRate,
                                        channels: request.channels, bitsPerSample: request.bitsPerSample)
            }
            let session = try PassThruSession(id: id, request: request, owner: call.sender, input: input, output: output, service: self)
            state.withLock {
                $0.active = session
                $0.starting = false
            }
            try? manager.withLock { try $0?.set(Manager.active, .objectPath(session.path)) }
            logger.info("pass-thru \(id) for \(call.sender) on \(input.device)\(input.fromSession ? " (the session's input)" : ""): \(request.samplingRate) Hz, \(request.bitsPerSample) bit, \(request.channels) channel(s), \(request.maxDurationMs) ms, chunks of \(request.chunkMs) ms; ALSA period \(session.periodFrames) frames, buffer \(session.bufferFrames)",
                        metadata: ["passthru": "\(id)", "caller": "\(call.sender)"])
            call.afterReply { session.begin() }
            return session.path
        } catch {
            state.withLock { $0.starting = false }
            output?.abandon()
            throw error
        }
    }

    /// Claims the audio session for pass-thru `id` as recording starts, and returns once
    /// the session has answered: with `MuteAudio`, a non-mixable recording claim (other
    /// playback is muted on the system mixer from here until the pass-thru ends);
    /// otherwise a claim that mixes.
    func claimAudio(for id: UInt64, muteAudio: Bool) async {
        if muteAudio {
            await sessionClaims.claimNow(for: id, category: "record")
        } else {
            await sessionClaims.claimNow(for: id, category: "playAndRecord", options: ["mixWithOthers"])
        }
    }

    /// Follows the session's interruptions: another client's non-mixable activation ends
    /// the pass-thru it interrupts (`ABORTED`, `interrupted`).
    func watchInterruptions() async {
        await sessionClaims.watchInterruptions { [weak self] id in
            guard let self, let session = self.state.withLock({ $0.active }), session.id == id else { return }
            session.end(.interrupted)
        }
    }

    /// The session's input when it names one (and following it is on), else `--device`.
    /// `startingSession` false: the session is asked only while it is on the bus.
    func currentInput(startingSession: Bool) async -> Input {
        if settings.followSession, let input = await SessionClient(connection: connection, timeout: .milliseconds(500),
                                                                     startingService: startingSession).input() {
            return Input(device: input.device, channels: input.channels,
                         periodLimitSeconds: input.ioBufferDuration > 0 ? input.ioBufferDuration : nil, fromSession: true)
        }
        return deviceInput
    }

    /// `--device` and `--channels`: the input without a session.
    var deviceInput: Input { Input(device: settings.device, channels: settings.channels, periodLimitSeconds: nil, fromSession: false) }

    func endCallersPassThru(_ call: MethodCall) throws(DBusError) {
        guard let session = state.withLock({ $0.active }), session.owner == call.sender else {
            throw .earshot(.rejected, "\(call.sender) has no active pass-thru")
        }
        session.end(.end)
    }

    /// The active pass-thru's end by its MaxDuration, known once it records. Under the
    /// state lock, as `finished` clears it: a pass-thru that has ended publishes nothing.
    func publishEnd(_ monotonicUs: UInt64, of session: PassThruSession) {
        state.withLock { s in
            guard s.active === session else { return }
            try? manager.withLock { try $0?.set(Manager.endsAtMonotonicUs, .uint64(monotonicUs)) }
        }
    }

    /// Called once by a session when it has finished.
    func finished(_ session: PassThruSession) {
        sessionClaims.release(for: session.id)
        if settings.followSession { Task { await describeInput(askingSession: !sessionLeft.withLock { $0 }) } }
        state.withLock { s in
            if s.active === session { s.active = nil }
            try? manager.withLock {
                try $0?.set([(Manager.active, .objectPath(.root)), (Manager.endsAtMonotonicUs, .uint64(0))])
            }
        }
        let linger = settings.linger
        let connection = self.connection
        Task { await Lingering.leave(after: linger) { connection.unexport(session.path) } }
    }

    /// Ends the active pass-thru on shutdown.
    func shutdown() {
        state.withLock { $0.active }?.end(.cancel)
    }
}
