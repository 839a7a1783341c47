import ContractCore

/// Why an alert completed, as `Completed`'s `Reason`.
public enum AlertEndReason: String, Sendable, CaseIterable {
    case timeout, button, dismissed, cancelled, preempted
    case rateLimited = "rate-limited"
    case queueFull = "queue-full"
    case captureActive = "capture-active"
    case ownerVanished = "owner-vanished"
    /// Another client took the audio focus with a non-mixable activation.
    case interrupted
    /// A FILE chunk could not be read and the alert has no text to show instead.
    case fileNotFound = "file-not-found"

    /// The rejections: the alert was never queued.
    public var isRejection: Bool { self == .rateLimited || self == .queueFull || self == .captureActive }
}

/// How an alert completed: the contract's `Completed(b success, s resultCode, a{sv} info)`.
public struct AlertEnd: Sendable, Equatable {
    public let reason: AlertEndReason
    public var pressedButton: UInt16?
    /// For rejections: milliseconds until the same request would be accepted.
    public var tryAgainMs: UInt32?
    /// A `STEAL_FOCUS` button ended it: the owner's app should bring itself forward.
    public var focusRequested = false

    public init(_ reason: AlertEndReason, pressedButton: UInt16? = nil, tryAgainMs: UInt32? = nil) {
        self.reason = reason
        self.pressedButton = pressedButton
        self.tryAgainMs = tryAgainMs
    }

    /// timeout, button, dismissed → SUCCESS (WARNINGS when there were warnings);
    /// cancelled, preempted, interrupted, owner vanished → ABORTED; rejections → REJECTED;
    /// an unreadable FILE without text → FILE_NOT_FOUND.
    public func resultCode(warnings: Bool) -> ResultCode {
        switch reason {
        case .timeout, .button, .dismissed: warnings ? .warnings : .success
        case .cancelled, .preempted, .interrupted, .ownerVanished: .aborted
        case .rateLimited, .queueFull, .captureActive: .rejected
        case .fileNotFound: .fileNotFound
        }
    }

    public var success: Bool {
        switch reason {
        case .timeout, .button, .dismissed: true
        default: false
        }
    }
}
