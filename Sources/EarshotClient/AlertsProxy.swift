import ContractCore
import EarshotContract
import EarshotDBus

private typealias AlertKeys = AlertsContract.Manager.Keys

/// An alert for `PresentAlert` (org.earshot.Alerts1), after SDL-0282's `SDLAlertView`.
public struct Alert: Sendable {
    public var text: String?
    public var secondaryText: String?
    public var tertiaryText: String?
    /// Seconds it stays without buttons (3..10; nil is the presenter's default).
    public var timeout: Double?
    public var audio: [SpeechChunk]
    public var playTone = false
    public var showWaitIndicator = false
    public var softButtons: [SoftButton] = []
    public var icon: String?
    public var priority: Priority = .normal
    public var outliveOwner = false

    public enum Priority: String, Sendable, CaseIterable {
        case normal = "NORMAL", communication = "COMMUNICATION", navigation = "NAVIGATION", voicecom = "VOICECOM"
        case emergency = "EMERGENCY"
    }

    public struct SoftButton: Sendable {
        public var id: UInt16
        public var text: String
        public var image: String?
        /// What it shows (nil: what is given, text or image or both).
        public var type: ButtonType?
        public var highlighted = false
        public var systemAction: SystemAction = .defaultAction

        public enum ButtonType: String, Sendable, CaseIterable {
            case text = "TEXT", image = "IMAGE", both = "BOTH"
        }

        public enum SystemAction: String, Sendable, CaseIterable {
            case defaultAction = "DEFAULT_ACTION", stealFocus = "STEAL_FOCUS", keepContext = "KEEP_CONTEXT"
        }

        public init(id: UInt16, text: String, image: String? = nil) {
            self.id = id
            self.text = text
            self.image = image
        }

        var value: [String: DBusValue] {
            typealias Keys = AlertsContract.Manager.SoftButtonKeys
            var value: [String: DBusValue] = [Keys.id.name: .uint16(id), Keys.text.name: .string(text),
                                              Keys.highlighted.name: .boolean(highlighted), Keys.systemAction.name: .string(systemAction.rawValue)]
            value[Keys.image] = image.map(DBusValue.string)
            value[Keys.type] = type.map { DBusValue.string($0.rawValue) }
            return value
        }
    }

    public init(text: String? = nil, secondaryText: String? = nil, audio: [SpeechChunk] = [], softButtons: [SoftButton] = []) {
        self.text = text
        self.secondaryText = secondaryText
        self.audio = audio
        self.softButtons = softButtons
    }

    var values: [String: DBusValue] {
        var values: [String: DBusValue] = [AlertKeys.priority.name: .string(priority.rawValue)]
        values[AlertKeys.text] = text.map(DBusValue.string)
        values[AlertKeys.secondaryText] = secondaryText.map(DBusValue.string)
        values[AlertKeys.tertiaryText] = tertiaryText.map(DBusValue.string)
        values[AlertKeys.timeout] = timeout.map(DBusValue.double)
        if !audio.isEmpty { values[AlertKeys.audio] = SpeechChunk.value(audio) }
        if playTone { values[AlertKeys.playTone] = .boolean(true) }
        if showWaitIndicator { values[AlertKeys.showWaitIndicator] = .boolean(true) }
        if !softButtons.isEmpty { values[AlertKeys.softButtons] = .vardicts(softButtons.map(\.value)) }
        values[AlertKeys.icon] = icon.map(DBusValue.string)
        if outliveOwner { values[AlertKeys.outliveOwner] = .boolean(true) }
        return values
    }
}

/// How an alert ended: SDL-0282's completion, with the time after which a refused alert
/// would be taken.
public struct AlertResult: Sendable, Equatable {
    public let success: Bool
    public let resultCode: ResultCode
    /// When refused (`REJECTED`): how long until the same request would be accepted.
    public let tryAgainTimeMs: UInt32?
    public let pressedButton: UInt16?
    public let reason: AlertEndReason?
    public let warnings: [String]
    /// A `STEAL_FOCUS` button ended it: the application is to take the user's focus.
    public let focusRequested: Bool

    /// The result a `Completed` signal's arguments (b, s, a{sv}) give; nil when they are not those.
    public init?(completed arguments: [DBusValue]) {
        typealias Keys = AlertsContract.Alert.CompletionKeys
        guard arguments.count == 3, let success = arguments[0].boolValue,
              let code = arguments[1].stringValue.flatMap(ResultCode.init(rawValue:)), let info = arguments[2].stringKeyedValue else {
            return nil
        }
        self.success = success
        resultCode = code
        tryAgainTimeMs = info[Keys.tryAgainTimeMs]?.uint32Value
        pressedButton = info[Keys.pressedButton]?.uint16Value
        reason = info[Keys.reason]?.stringValue.map(AlertEndReason.init(reported:))
        warnings = info[Keys.warnings]?.arrayValue?.compactMap(\.stringValue) ?? []
        focusRequested = info[Keys.focusRequested]?.boolValue ?? false
    }
}

/// `Speak`'s options: the alert's keys that apply to audio alone.
public struct SpeechOptions: Sendable {
    public var priority: Alert.Priority = .normal
    /// A tone before the speech.
    public var playTone = false
    /// It stays when its owner leaves the bus.
    public var outliveOwner = false
    /// A pipe's writing end that receives what is played: a streamed WAV of every frame as it
    /// goes to the output (the speech's `StartedAtMonotonicUs` says when the first did).
    public var playedAudio: UnixFD?

    public init(priority: Alert.Priority = .normal, playTone: Bool = false, outliveOwner: Bool = false, playedAudio: UnixFD? = nil) {
        self.priority = priority
        self.playTone = playTone
        self.outliveOwner = outliveOwner
        self.playedAudio = playedAudio
    }

    var values: [String: DBusValue] {
        var values: [String: DBusValue] = [AlertKeys.priority.name: .string(priority.rawValue)]
        if playTone { values[AlertKeys.playTone] = .boolean(true) }
        if outliveOwner { values[AlertKeys.outliveOwner] = .boolean(true) }
        if let playedAudio { values[AlertKeys.playedAudio] = .unixFD(playedAudio) }
        return values
    }
}

/// `org.earshot.Alerts1`.
public struct AlertsProxy: Sendable {
    private(set) var calls: ServiceCalls

    /// Calls give up after `timeout` (no reply: `org.freedesktop.DBus.Error.NoReply`).
    public init(connection: DBusConnection, timeout: Duration = DBusConnection.defaultTimeout) {
        calls = ServiceCalls(connection: connection, busName: AlertsContract.busName, timeout: timeout)
    }

    /// The same proxy with calls that give up after `timeout`.
    public func timing(out timeout: Duration) -> AlertsProxy {
        var proxy = self
        proxy.calls.timeout = timeout
        return proxy
    }

    /// Presents `alert` and returns once it has completed.
    public func present(_ alert: Alert) async throws -> AlertResult {
        let values = alert.values
        try RequestCheck.check(values, against: AlertsContract.Manager.alertKeys)
        return try await completed(AlertsContract.Manager.presentAlert, [.vardict(values)])
    }

    /// Presents `alert`; `completion` is called once it has completed (SDL-0282's
    /// `presentAlert(_:withCompletionHandler:)`), with its result or the error that refused it.
    public func present(_ alert: Alert, withCompletionHandler completion: @escaping @Sendable (Result<AlertResult, EarshotError>) -> Void) {
        Task {
            do {
                completion(.success(try await present(alert)))
            } catch {
                completion(.failure(EarshotError(error)))
            }
        }
    }

    /// Speaks `chunks` without display and returns once they have been spoken.
    public func speak(_ chunks: [SpeechChunk], priority: Alert.Priority = .normal) async throws -> AlertResult {
        try await speak(chunks, options: SpeechOptions(priority: priority))
    }

    /// Speaks `chunks` without display, as `options` say, and returns once they have been spoken.
    public func speak(_ chunks: [SpeechChunk], options: SpeechOptions) async throws -> AlertResult {
        try await startSpeaking(chunks, options: options).result
    }

    /// Speaks `chunks` without display and replies as soon as the speech is queued: the
    /// returned object follows it (its `EndsAtMonotonicUs` once rendered) and gives its result.
    public func startSpeaking(_ chunks: [SpeechChunk], options: SpeechOptions = SpeechOptions()) async throws -> PresentedAlert {
        let values = options.values
        try RequestCheck.check(values, against: AlertsContract.Manager.speechKeys)
        return try await started(AlertsContract.Manager.speak, [SpeechChunk.value(chunks), .vardict(values)])
    }

    /// Presents `alert` and replies as soon as it is queued: the returned object presses its
    /// buttons, dismisses or cancels it, and gives its result.
    public func show(_ alert: Alert) async throws -> PresentedAlert {
        let values = alert.values
        try RequestCheck.check(values, against: AlertsContract.Manager.alertKeys)
        return try await started(AlertsContract.Manager.presentAlert, [.vardict(values)])
    }

    /// Presents `alert` without following it (no subscription): for a caller that acts on it
    /// by its object and reads its outcome from its properties, if at all.
    public func submit(_ alert: Alert) async throws -> AlertControl {
        let values = alert.values
        try RequestCheck.check(values, against: AlertsContract.Manager.alertKeys)
        let path = try await calls.object(ObjectPath(declared: AlertsContract.managerPath), AlertsContract.Manager.interface,
                                          AlertsContract.Manager.presentAlert, [.vardict(values)])
        return AlertControl(path: path, calls: calls)
    }

    /// Speaks `chunks` without display and without following it (no subscription): for a
    /// caller that reads its outcome from its object's properties, or not at all.
    public func submit(speaking chunks: [SpeechChunk], options: SpeechOptions = SpeechOptions()) async throws -> AlertControl {
        let values = options.values
        try RequestCheck.check(values, against: AlertsContract.Manager.speechKeys)
        let path = try await calls.object(ObjectPath(declared: AlertsContract.managerPath), AlertsContract.Manager.interface,
                                          AlertsContract.Manager.speak, [SpeechChunk.value(chunks), .vardict(values)])
        return AlertControl(path: path, calls: calls)
    }

    /// Calls `method`, which replies with an alert object, and waits for its `Completed`.
    private func completed(_ method: MethodDeclaration, _ arguments: [DBusValue]) async throws -> AlertResult {
        try await started(method, arguments).result
    }

    /// Calls `method`, which replies with an alert object; its `Completed` is subscribed first.
    private func started(_ method: MethodDeclaration, _ arguments: [DBusValue]) async throws -> PresentedAlert {
        typealias Members = AlertsContract.Alert
        let completions = try await calls.subscribe(Members.interface, Members.completed)
        let path = try await calls.object(ObjectPath(declared: AlertsContract.managerPath), AlertsContract.Manager.interface, method,
                                          arguments, cleanup: completions.cancel)
        let completion = Task { () throws -> AlertResult in
            defer { completions.cancel() }
            for await signal in completions where signal.path == path {
                guard let result = AlertResult(completed: signal.body) else { continue }
                return result
            }
            throw EarshotError(name: DBusError.prefix + "Disconnected", message: "the bus went away before \(path) completed")
        }
        return PresentedAlert(path: path, calls: calls, completion: completion)
    }
}

/// An alert that was accepted: queued or being presented, until it completes.
public final class PresentedAlert: Sendable {
    private typealias Members = AlertsContract.Alert
    public let path: ObjectPath
    let calls: ServiceCalls
    private let completion: Task<AlertResult, any Error>

    init(path: ObjectPath, calls: ServiceCalls, completion: Task<AlertResult, any Error>) {
        self.path = path
        self.calls = calls
        self.completion = completion
    }

    /// How it completed (SDL-0282's completion), once it has.
    public var result: AlertResult {
        get async throws {
            do {
                return try await completion.value
            } catch {
                throw EarshotError(error)
            }
        }
    }

    /// The user presses soft button `id`: SUCCESS with that button.
    public func pressButton(_ id: UInt16) async throws { try await control.pressButton(id) }

    /// The user dismisses it: SUCCESS.
    public func dismiss() async throws { try await control.dismiss() }

    /// The owner withdraws it: ABORTED.
    public func cancel() async throws { try await control.cancel() }

    /// Its object: its properties (`read`, `observe`) and the same actions.
    public var control: AlertControl { AlertControl(path: path, calls: calls) }
}

/// The user's and the owner's actions on any alert, by its object (an HMI acting on the
/// alert being presented, whoever presented it).
public struct AlertControl: Sendable {
    private typealias Members = AlertsContract.Alert
    public let path: ObjectPath
    let calls: ServiceCalls

    /// The user presses soft button `id`: SUCCESS with that button.
    public func pressButton(_ id: UInt16) async throws {
        _ = try await calls.call(path, Members.interface, Members.pressButton, [.uint16(id)])
    }

    /// The user dismisses it: SUCCESS.
    public func dismiss() async throws {
        _ = try await calls.call(path, Members.interface, Members.dismiss)
    }

    /// The owner withdraws it: ABORTED.
    public func cancel() async throws {
        _ = try await calls.call(path, Members.interface, Members.cancel)
    }
}

extension AlertsProxy {
    /// Actions on the alert at `path`.
    public func alert(at path: ObjectPath) -> AlertControl { AlertControl(path: path, calls: calls) }
}
