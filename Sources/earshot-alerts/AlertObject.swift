import AlertsCore
import ContractCore
import EarshotContract
import EarshotDBus
import Glibc

/// One alert on the bus: its object, what it shows and says, who may act on it.
final class AlertObject: Sendable {
    /// The alert object's declared members.
    private typealias Members = AlertsContract.Alert

    let id: UInt64
    let path: ObjectPath
    let owner: String
    let request: AlertRequest
    /// The audio chunks that will be played (unreadable FILE chunks left out).
    let audio: [SpeechChunk]
    /// The FILE chunks' files, opened with the caller's rights when the alert came, by path.
    let files: [String: UnixFD]
    /// `PlayedAudio`: where what is played goes too (taken by the output; closed if the
    /// alert completes without playing).
    let playedAudio: UnixFD?
    /// The text as laid out for the display.
    let lines: [String]
    /// How long it stays up once presented (0 for speech only).
    let durationMs: UInt64
    private let service: AlertsService
    /// Cleared on unexport: an alert that has left the bus changes no property.
    private let objectBox = Locked<ExportedObject?>(nil)
    private let endsAt = Locked<UInt64>(0)
    private let warnings: Locked<[String]>
    private let finished = Locked(false)

    init(id: UInt64, request: AlertRequest, audio: [SpeechChunk], files: [String: UnixFD], playedAudio: UnixFD? = nil, lines: [String],
         durationMs: UInt64, warnings: [String], owner: String, service: AlertsService) throws(DBusError) {
        self.id = id
        self.files = files
        self.playedAudio = playedAudio
        self.lines = lines
        self.durationMs = durationMs
        self.owner = owner
        self.request = request
        self.audio = audio
        self.service = service
        self.warnings = Locked(warnings)
        path = try AlertsInterfaces.managerPath.appending("Alert").appending(String(id))
        let buttons: [[String: DBusValue]] = request.softButtons.map { button in
            typealias Keys = AlertsContract.Manager.SoftButtonKeys
            return [Keys.id.name: .uint16(button.id), Keys.text.name: .string(button.text), Keys.image.name: .string(button.image),
                    Keys.type.name: .string(button.kind.rawValue), Keys.highlighted.name: .boolean(button.highlighted),
                    Keys.systemAction.name: .string(button.systemAction.rawValue)]
        }
        // The handlers refer to `self`, so the object is exported last.
        let object = try service.connection.export(path, interfaces: [AlertsInterfaces.alertInterface(self)], values: [
            (Members.state, .string("queued")),
            (Members.owner, .string(owner)),
            (Members.lines, .strings(lines)),
            (Members.softButtons, .vardicts(buttons)),
            (Members.priority, .string(request.priority.rawValue)),
            (Members.showWaitIndicator, .boolean(request.showWaitIndicator)),
            (Members.icon, .string(request.icon)),
            (Members.resultCode, .string("")),
            (Members.tryAgainTimeMs, .uint32(0)),
            (Members.endsAtMonotonicUs, .uint64(0)),
            (Members.startedAtMonotonicUs, .uint64(0)),
        ])
        objectBox.withLock { $0 = object }
    }

    private var object: ExportedObject? { objectBox.withLock { $0 } }

    /// When the presented alert ends unless something ends it sooner (`EndsAtMonotonicUs`,
    /// µs; 0 while that is not known), set when it changes.
    func ends(atMonotonicUs end: UInt64) {
        guard endsAt.withLock({ known in
            defer { known = end }
            return known != end
        }) else { return }
        try? object?.set(Members.endsAtMonotonicUs, .uint64(end))
    }

    /// Its audio's first frame went out at `startedUs` (`StartedAtMonotonicUs`).
    func started(atMonotonicUs startedUs: UInt64) {
        try? object?.set(Members.startedAtMonotonicUs, .uint64(startedUs))
    }

    var isFinished: Bool { finished.withLock { $0 } }

    func addWarning(_ warning: String) {
        warnings.withLock { $0.append(warning) }
    }

    func presented() {
        try? object?.set(Members.state, .string("presenting"))
    }

    /// Sets the final properties and emits `Completed` (once).
    /// A `KEEP_CONTEXT` or `STEAL_FOCUS` button was pressed: `ButtonPressed`, broadcast.
    func buttonPressed(_ button: UInt16) {
        do {
            try object?.emit(Members.buttonPressed, [.uint16(button)])
        } catch {
            service.logger.warning("alert \(id): \(AlertsContract.Alert.buttonPressed.name) not sent: \(error)")
        }
        service.logger.info("alert \(id): button \(button) pressed")
    }

    func complete(_ end: AlertEnd) {
        let first = finished.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        playedAudio?.close()  // when never played; the output has taken it otherwise
        let warnings = warnings.withLock { $0 }
        let code = end.resultCode(warnings: !warnings.isEmpty)
        try? object?.set([(Members.state, .string("finished")), (Members.resultCode, .string(code.rawValue)),
                          (Members.tryAgainTimeMs, .uint32(end.tryAgainMs ?? 0))])
        var info: [String: DBusValue] = [:]
        let keys = Members.CompletionKeys.self
        if end.reason != .fileNotFound { info[keys.reason] = .string(end.reason.rawValue) }
        if let tryAgain = end.tryAgainMs { info[keys.tryAgainTimeMs] = .uint32(tryAgain) }
        if let button = end.pressedButton { info[keys.pressedButton] = .uint16(button) }
        if end.focusRequested { info[keys.focusRequested] = .boolean(true) }
        if !warnings.isEmpty { info[keys.warnings] = .strings(warnings) }
        do {
            try object?.emit(Members.completed, [.boolean(end.success), .string(code.rawValue), .vardict(info)])
        } catch {
            service.logger.warning("alert \(id): Completed not sent: \(error)")
        }
        let details = (end.tryAgainMs.map { ", try again in \($0) ms" } ?? "")
            + (warnings.isEmpty ? "" : "; warnings: \(warnings.joined(separator: "; "))")
        service.logger.info("alert \(id) of \(owner) completed: \(code.rawValue) (\(end.reason.rawValue))\(details)",
                            metadata: ["alert": "\(id)", "result": "\(code.rawValue)", "reason": "\(end.reason.rawValue)"])
    }

    // MARK: Methods

    /// `Cancel()`: the owner's (or a privileged HMI's).
    func cancel(_ call: MethodCall) async throws {
        try await authorize(call, ownerOnly: true)
        try service.act(on: self, call: AlertsContract.Alert.cancel.name) { queue, now in queue.cancel(self.id, now: now) }
    }

    /// `PressButton(q id)`: the user pressed one of the presented alert's buttons.
    func pressButton(_ call: MethodCall) async throws {
        let button = try call.argument(0).uint16Value ?? 0
        try await authorize(call, ownerOnly: false)
        guard request.softButtons.contains(where: { $0.id == button }) else {
            throw DBusError.earshot(.invalidData, "id: the alert has no button \(button) (it has \(request.softButtons.map { String($0.id) }.joined(separator: ", ").nonEmpty ?? "none"))")
        }
        let action = request.softButtons.first { $0.id == button }?.systemAction ?? .defaultAction
        try service.act(on: self, call: AlertsContract.Alert.pressButton.name, presentedOnly: true) { queue, now in
            queue.pressButton(self.id, button: button, action: action, now: now)
        }
    }

    /// `Dismiss()`: the user dismissed the presented alert.
    func dismiss(_ call: MethodCall) async throws {
        try await authorize(call, ownerOnly: false)
        try service.act(on: self, call: AlertsContract.Alert.dismiss.name, presentedOnly: true) { queue, now in queue.dismiss(self.id, now: now) }
    }

    /// The owner may do everything; the HMI's user actions may also come from uid 0 or
    /// the service's own user; `Cancel` from others only on the system bus.
    private func authorize(_ call: MethodCall, ownerOnly: Bool) async throws {
        guard call.sender != owner else { return }
        let caller = try await call.caller()
        let privileged = caller.uid == 0 || caller.uid == getuid()
        guard privileged && (!ownerOnly || service.settings.systemBus) else {
            throw DBusError.earshot(.disallowed, "\(call.message.member ?? "this"): only the owner \(owner) may act on this alert")
        }
    }

    func unexport() {
        service.connection.unexport(path)
        objectBox.withLock { $0 = nil }
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
