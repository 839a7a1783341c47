import EarshotContract

/// A string of one of the contract's closed sets (a state, a reason), as a service reports
/// it: one this client knows, or `unknown` for a value a later service added, kept as sent.
/// `ContractValueTests` holds each type's known values to the contract's list.
public protocol ContractValue: RawRepresentable<String>, Sendable, Hashable, CustomStringConvertible {
    /// The values this client knows, in the contract's order.
    static var known: [Self] { get }
    /// A value this client does not know.
    static func unknown(_ value: String) -> Self
}

extension ContractValue {
    /// The value a service reported: a known one, or `unknown` keeping it as sent.
    public init(reported value: String) { self = Self.known.first { $0.rawValue == value } ?? .unknown(value) }
    /// Never nil: a value this client does not know is `unknown`.
    public init?(rawValue: String) { self.init(reported: rawValue) }
    public var description: String { rawValue }
}

/// Why a pass-thru ended (`Finished`'s `Reason`).
public enum PassThruEndReason: ContractValue {
    case timeout, done, end, cancel, retry, silence, ownerVanished, interrupted, deviceError
    case unknown(String)

    public static let known: [PassThruEndReason] = [.timeout, .done, .end, .cancel, .retry, .silence, .ownerVanished, .interrupted, .deviceError]

    public var rawValue: String {
        switch self {
        case .timeout: "timeout"
        case .done: "done"
        case .end: "end"
        case .cancel: "cancel"
        case .retry: "retry"
        case .silence: "silence"
        case .ownerVanished: "owner-vanished"
        case .interrupted: "interrupted"
        case .deviceError: "device-error"
        case .unknown(let value): value
        }
    }
}

/// What a pass-thru is doing (`State`).
public enum PassThruState: ContractValue {
    case prompting, recording, finished
    case unknown(String)

    public static let known: [PassThruState] = [.prompting, .recording, .finished]

    public var rawValue: String {
        switch self {
        case .prompting: "prompting"
        case .recording: "recording"
        case .finished: "finished"
        case .unknown(let value): value
        }
    }
}

/// Why an alert ended (`Completed`'s `Reason`).
public enum AlertEndReason: ContractValue {
    case timeout, button, dismissed, cancelled, preempted, rateLimited, queueFull, captureActive, ownerVanished, interrupted
    /// A FILE chunk could not be read and the alert had no text to show instead.
    case fileNotFound
    case unknown(String)

    public static let known: [AlertEndReason] = [.timeout, .button, .dismissed, .cancelled, .preempted, .rateLimited, .queueFull,
                                                 .captureActive, .ownerVanished, .interrupted, .fileNotFound]

    public var rawValue: String {
        switch self {
        case .timeout: "timeout"
        case .button: "button"
        case .dismissed: "dismissed"
        case .cancelled: "cancelled"
        case .preempted: "preempted"
        case .rateLimited: "rate-limited"
        case .queueFull: "queue-full"
        case .captureActive: "capture-active"
        case .ownerVanished: "owner-vanished"
        case .interrupted: "interrupted"
        case .fileNotFound: "file-not-found"
        case .unknown(let value): value
        }
    }
}

/// Where an alert is (`State`).
public enum AlertState: ContractValue {
    case queued, presenting, finished
    case unknown(String)

    public static let known: [AlertState] = [.queued, .presenting, .finished]

    public var rawValue: String {
        switch self {
        case .queued: "queued"
        case .presenting: "presenting"
        case .finished: "finished"
        case .unknown(let value): value
        }
    }
}

/// The step a job is at (`State`).
public enum JobState: ContractValue {
    case preparing, prompting, recording, storing, confirming, finished
    case unknown(String)

    public static let known: [JobState] = [.preparing, .prompting, .recording, .storing, .confirming, .finished]

    public var rawValue: String {
        switch self {
        case .preparing: "preparing"
        case .prompting: "prompting"
        case .recording: "recording"
        case .storing: "storing"
        case .confirming: "confirming"
        case .finished: "finished"
        case .unknown(let value): value
        }
    }
}

/// Where a claim on the session is (`State`).
public enum ActivationState: ContractValue {
    case active, interrupted, deactivated
    case unknown(String)

    public static let known: [ActivationState] = [.active, .interrupted, .deactivated]

    public var rawValue: String {
        switch self {
        case .active: "active"
        case .interrupted: "interrupted"
        case .deactivated: "deactivated"
        case .unknown(let value): value
        }
    }
}
