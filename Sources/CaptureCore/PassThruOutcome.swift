import ContractCore

/// Why a pass-thru ended, as `Finished`'s `Reason`.
public enum EndReason: String, Sendable, CaseIterable {
    case timeout, done, end, cancel, retry, silence
    case ownerVanished = "owner-vanished"
    case deviceError = "device-error"
    /// Another client's non-mixable activation took the audio focus.
    case interrupted

    /// Whether the audio already heard when the pass-thru ends still goes out: true for
    /// the user's ends (`Done`, `End`, `Cancel`, `Retry`) and an interruption, whose last
    /// chunk holds what the device captured up to the request. Timeout and silence end on
    /// audio already read; a vanished owner or device has no one or nothing left to read for.
    public var keepsHeardAudio: Bool {
        switch self {
        case .done, .end, .cancel, .retry, .interrupted: true
        case .timeout, .silence, .ownerVanished, .deviceError: false
        }
    }
}

/// How a pass-thru ended: the contract's result mapping.
public struct PassThruOutcome: Sendable, Equatable {
    public let resultCode: ResultCode
    public let success: Bool
    public let reason: EndReason

    /// timeout, Done, End, EndAudioPassThru and silence → SUCCESS; Cancel → ABORTED;
    /// Retry → RETRY (success); owner vanished or interrupted → ABORTED; device failure →
    /// GENERIC_ERROR.
    /// A prompt that could not be spoken turns SUCCESS into WARNINGS.
    public init(reason: EndReason, promptFailed: Bool) {
        self.reason = reason
        switch reason {
        case .timeout, .done, .end, .silence:
            resultCode = promptFailed ? .warnings : .success
            success = true
        case .retry:
            resultCode = .retry
            success = true
        case .cancel, .ownerVanished, .interrupted:
            resultCode = .aborted
            success = false
        case .deviceError:
            resultCode = .genericError
            success = false
        }
    }
}
