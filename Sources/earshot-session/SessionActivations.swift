import ContractCore
import EarshotContract
import EarshotDBus
import EarshotService
import EarshotSync
import Glibc
import SessionCore

/// Clients' claims on audio: activation objects, their owners, and the interruptions and
/// ducking the activation book decides.
extension SessionService {
    static func activationPath(_ id: UInt64) -> ObjectPath {
        // A manager path and a number always make a valid path.
        try! ObjectPath(SessionInterfaces.managerPath.rawValue + "/Activation/\(id)")
    }

    /// `Activate`: a new activation owned by the caller, ended by `Deactivate` or by the
    /// caller leaving the bus.
    func activate(_ call: MethodCall) async throws -> ObjectPath {
        let (configuration, audioStream) = try SessionRequest.activation(call)
        let owner = call.sender
        // The owner's streams are the activation's own on the mixer.
        let process = await (try? connection.processID(of: owner)).map { Int32(clamping: $0) } ?? 0
        return try await worker.run { () -> Result<ObjectPath, DBusError> in
            if let refusal = self.state.withLock({ $0.book.refusal(forAnotherOf: owner) }) {
                return .failure(DBusError(name: EarshotContract.limitsExceeded, message: "Activate: \(refusal)"))
            }
            let id = self.state.withLock { state -> UInt64 in
                defer { state.nextActivation += 1 }
                return state.nextActivation
            }
            let path = Self.activationPath(id)
            let object: ExportedObject
            do throws(DBusError) {
                object = try self.connection.export(path, interfaces: [SessionInterfaces.activationInterface(self, id: id)],
                                                    values: [
                                                        (Activation.owner, .string(owner)),
                                                        (Activation.category, .string(configuration.category.rawValue)),
                                                        (Activation.mode, .string(configuration.mode.rawValue)),
                                                        (Activation.options, SessionValues.options(configuration.effectiveOptions)),
                                                        (Activation.state, .string("active")),
                                                        (Activation.ducked, .boolean(false)),
                                                    ])
            } catch {
                return .failure(error)
            }
            let connection = self.connection
            let watch = Task { [weak self] in
                guard let owners = try? await connection.watchNameOwner(owner) else { return }
                for await current in owners where current == nil {
                    guard let service = self else { return }
                    await service.worker.run { service.end(id, because: "its owner left the bus") }
                    return
                }
            }
            let events = self.state.withLock { state -> [ActivationBook.Event] in
                state.handles[id] = ActivationHandle(object: object, owner: owner, ownerWatch: watch, process: process,
                                                     audioStream: audioStream)
                return state.book.activate(id: id, owner: owner, configuration: configuration)
            }
            let options = configuration.effectiveOptions.sorted().map(\.rawValue).joined(separator: ", ")
            self.logger.info("activation \(id) of \(owner): \(configuration.category.rawValue) [\(options)]",
                             metadata: ["activation": "\(id)", "caller": "\(owner)"])
            self.dispatch(events)
            self.publish()
            return .success(path)
        }.get()
    }

    /// `Deactivate`: the owner's, or (on the system bus) uid 0's or the service user's.
    func deactivate(id: UInt64, call: MethodCall) async throws {
        guard let owner = state.withLock({ $0.handles[id]?.owner }) else {
            throw DBusError.earshot(.rejected, "the activation has already ended")
        }
        if call.sender != owner {
            let caller = try await call.caller()
            let privileged = caller.uid == 0 || caller.uid == getuid()
            guard privileged, settings.systemBus else {
                throw DBusError.earshot(.disallowed, "Deactivate: only the owner \(owner) may end this activation")
            }
        }
        await worker.run { self.end(id, because: "deactivated by \(call.sender)") }
    }

    /// Ends a client's activation. Call only on the worker.
    func end(_ id: UInt64, because reason: String) {
        let ended = state.withLock { state -> (ActivationHandle, [ActivationBook.Event])? in
            guard let handle = state.handles.removeValueShrinking(forKey: id) else { return nil }
            return (handle, state.book.deactivate(id: id))
        }
        guard let (handle, events) = ended else { return }
        handle.ownerWatch.cancel()
        logger.info("activation \(id) of \(handle.owner) ended: \(reason)", metadata: ["activation": "\(id)"])
        try? handle.object.set([(Activation.state, .string("deactivated")), (Activation.ducked, .boolean(false))])
        dispatch(events)
        publish()
        let linger = settings.linger
        let connection = self.connection
        let path = handle.object.path
        tasks.run { await Lingering.leave(after: linger) { connection.unexport(path) } }
    }

    /// Tells each affected activation what happened to it: `Interruption` unicast to its
    /// owner (broadcast for the session's own), its `State` and `Ducked`. An interruption
    /// of the session's own activation ending re-applies the desired state when
    /// `KeepEnforced`. Call only on the worker.
    func dispatch(_ events: [ActivationBook.Event]) {
        var reapplyAfterInterruption = false
        for event in events {
            switch event {
            case .interruptionBegan(let id, let by):
                typealias Keys = SessionContract.Manager.InterruptionKeys
                let options: [String: DBusValue] = [Keys.activation.name: .objectPath(path(of: id)), Keys.by.name: .objectPath(path(of: by))]
                notify(id, "began", options, state: "interrupted")
            case .interruptionEnded(let id, let shouldResume):
                typealias Keys = SessionContract.Manager.InterruptionKeys
                let options: [String: DBusValue] = [Keys.activation.name: .objectPath(path(of: id)),
                                                    Keys.shouldResume.name: .boolean(shouldResume)]
                notify(id, "ended", options, state: "active")
                if id == Self.sessionActivation, state.withLock({ $0.keepEnforced }) { reapplyAfterInterruption = true }
            case .duckingChanged(let id, let ducked):
                if let object = state.withLock({ $0.handles[id]?.object }) {
                    try? object.set(Activation.ducked, .boolean(ducked))
                }
                logger.info("activation \(id) \(ducked ? "ducked" : "no longer ducked")")
            }
        }
        if reapplyAfterInterruption { reapply("interruption") }
        enforceFocus(confirmed: true)
    }

    private func path(of id: UInt64) -> ObjectPath {
        id == Self.sessionActivation ? SessionInterfaces.managerPath : Self.activationPath(id)
    }

    private func notify(_ id: UInt64, _ type: String, _ options: [String: DBusValue], state newState: String) {
        let handle = state.withLock { $0.handles[id] }
        logger.info("activation \(id): interruption \(type)")
        if let handle {
            try? handle.object.set(Activation.state, .string(newState))
            emit(Manager.interruption, [.string(type), .vardict(options)], to: handle.owner)
        } else if id == Self.sessionActivation {
            emit(Manager.interruption, [.string(type), .vardict(options)])
        }
    }
}
