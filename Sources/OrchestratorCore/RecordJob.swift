import EarshotContract
import ContractCore

/// Where a `RecordPiece` job is.
public enum JobState: String, Sendable, CaseIterable {
    case preparing, prompting, recording, storing, confirming, finished
}

/// What happened to a job, as the orchestrator saw it on the bus.
public enum JobEvent: Sendable, Equatable {
    /// The session activation was granted, or there is no session service.
    case sessionReady
    /// The session service refused the activation; the job goes on with `WARNINGS`.
    case sessionRefused(String)
    /// The pass-thru was accepted; it prompts first or records at once.
    case passThruStarted(prompting: Bool)
    case recordingStarted
    case framesCaptured(UInt64)
    /// The capture service refused the pass-thru (its error name and message); for a
    /// `Rejected` (another pass-thru active), how long that one still runs, when it said.
    case passThruRefused(ResultCode, String, tryAgainMs: UInt32? = nil)
    case passThruFinished(ResultCode, reason: String)
    case stored(pieceID: String)
    case storeFailed(String)
    case confirmationCompleted(ResultCode, tryAgainMs: UInt32?)
    case confirmationFailed(String)
    /// The time to try the pass-thru or the confirmation again has come.
    case retryDue
    case cancel
    /// A service the job needs left the bus.
    case serviceLost(ServiceName)
}

/// The services a job uses.
public enum ServiceName: Sendable, CaseIterable {
    case capture, alerts, pieces, session

    /// The service's well-known name.
    public var busName: String {
        switch self {
        case .capture: CaptureContract.busName
        case .alerts: AlertsContract.busName
        case .pieces: PiecesContract.busName
        case .session: SessionContract.busName
        }
    }
}

/// What the orchestrator must do next for a job.
public enum JobCommand: Sendable, Equatable {
    case activateSession
    case startPassThru
    /// Cancel the running pass-thru (the job was cancelled).
    case cancelPassThru
    /// Drop the collected audio as a piece.
    case store
    case presentConfirmation
    case scheduleRetry(afterMs: UInt32)
    /// Remove the piece this job stored (the job was cancelled after storing).
    case deletePiece(String)
    case releaseSession
    case finish(ResultCode, pieceID: String, reason: String)
}

/// A `RecordPiece` job: activate the session, run a pass-thru (prompt, then record),
/// store what it recorded as a piece, then confirm with an alert, retrying a pass-thru the
/// capture service rejects while another one records, and a confirmation the alert
/// service rejects, when they say to. Plain state: events in, commands out.
public struct RecordJob: Sendable {
    /// Confirmation attempts before the job gives up on showing one (the piece stays).
    public static let maxConfirmationAttempts = 5
    /// Pass-thru attempts before a job rejected by another pass-thru gives up.
    public static let maxPassThruAttempts = 5
    /// Added to the time another pass-thru has left: it frees the microphone as it ends.
    public static let passThruRetryMarginMs: UInt32 = 50

    public private(set) var state: JobState = .preparing
    public private(set) var pieceID = ""
    public private(set) var resultCode: ResultCode?
    public private(set) var framesCaptured: UInt64 = 0
    public private(set) var confirmationAttempts = 0
    public private(set) var passThruAttempts = 0
    private var cancelled = false
    private var warnings: [String] = []

    public init() {}

    /// The first commands of a new job.
    public mutating func start() -> [JobCommand] { [.activateSession] }

    public mutating func handle(_ event: JobEvent) -> [JobCommand] {
        guard state != .finished else { return [] }
        switch event {
        case .sessionReady:
            return startPassThru()
        case .sessionRefused(let why):
            warnings.append("audio session: \(why)")
            return startPassThru()
        case .passThruStarted(let prompting):
            if cancelled { return [.cancelPassThru] }
            state = prompting ? .prompting : .recording
            return []
        case .recordingStarted:
            if state == .prompting { state = .recording }
            return []
        case .framesCaptured(let frames):
            framesCaptured = max(framesCaptured, frames)
            return []
        case .passThruRefused(let code, let why, let tryAgain):
            if code == .rejected, let tryAgain, !cancelled {
                guard passThruAttempts < Self.maxPassThruAttempts else {
                    return finish(code, "capture refused the pass-thru \(passThruAttempts) times: \(why)")
                }
                return [.scheduleRetry(afterMs: tryAgain &+ Self.passThruRetryMarginMs)]  // still preparing
            }
            return finish(code, "capture refused the pass-thru: \(why)")
        case .passThruFinished(let code, let reason):
            if cancelled || code == .aborted {
                return finish(.aborted, cancelled ? "cancelled" : "the pass-thru ended with ABORTED (\(reason)); nothing stored")
            }
            guard code == .success || code == .warnings else {
                return finish(code, "the pass-thru ended with \(code.rawValue) (\(reason)); nothing stored")
            }
            if code == .warnings { warnings.append("pass-thru: \(reason)") }
            guard framesCaptured > 0 else { return finish(.genericError, "the pass-thru captured no audio; nothing stored") }
            state = .storing
            return [.store]
        case .stored(let id):
            pieceID = id
            if cancelled {
                pieceID = ""
                return [.deletePiece(id)] + finish(.aborted, "cancelled")
            }
            state = .confirming
            confirmationAttempts = 1
            return [.presentConfirmation]
        case .storeFailed(let why):
            return finish(.genericError, "storing failed: \(why)")
        case .confirmationCompleted(let code, let tryAgain):
            if code == .rejected, let tryAgain {
                guard confirmationAttempts < Self.maxConfirmationAttempts else {
                    warnings.append("confirmation rejected \(confirmationAttempts) times")
                    return finish(.warnings, "stored; the confirmation could not be shown")
                }
                return [.scheduleRetry(afterMs: tryAgain)]
            }
            if code != .success { warnings.append("confirmation: \(code.rawValue)") }
            return finish(warnings.isEmpty ? .success : .warnings, warnings.isEmpty ? "stored and confirmed" : warnings.joined(separator: "; "))
        case .confirmationFailed(let why):
            warnings.append("confirmation: \(why)")
            return finish(.warnings, warnings.joined(separator: "; "))
        case .retryDue:
            switch state {
            case .preparing: return startPassThru()
            case .confirming:
                confirmationAttempts += 1
                return [.presentConfirmation]
            default: return []
            }
        case .cancel:
            return cancel()
        case .serviceLost(let service):
            return lost(service)
        }
    }

    private mutating func startPassThru() -> [JobCommand] {
        guard state == .preparing, !cancelled else { return [] }
        passThruAttempts += 1
        return [.startPassThru]
    }

    private mutating func cancel() -> [JobCommand] {
        guard !cancelled else { return [] }
        cancelled = true
        switch state {
        case .preparing:
            return finish(.aborted, "cancelled")
        case .prompting, .recording:
            return [.cancelPassThru]  // finishes when the pass-thru reports its end
        case .storing:
            return []  // the piece is deleted as soon as it is stored
        case .confirming:
            let id = pieceID
            pieceID = ""
            return [.deletePiece(id)] + finish(.aborted, "cancelled")
        case .finished:
            return []
        }
    }

    private mutating func lost(_ service: ServiceName) -> [JobCommand] {
        let why = "\(service.busName) left the bus"
        switch (service, state) {
        case (.capture, .preparing), (.capture, .prompting), (.capture, .recording):
            return finish(.genericError, why + " during the pass-thru; nothing stored")
        case (.pieces, .storing):
            return finish(.genericError, why + " while storing")
        case (.alerts, .confirming):
            return finish(.warnings, "stored; " + why + " before the confirmation")
        case (.session, _):
            warnings.append(why)
            return []
        default:
            return []
        }
    }

    private mutating func finish(_ code: ResultCode, _ reason: String) -> [JobCommand] {
        state = .finished
        resultCode = code
        return [.releaseSession, .finish(code, pieceID: pieceID, reason: reason)]
    }
}
