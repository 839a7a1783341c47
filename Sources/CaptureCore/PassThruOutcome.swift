import ContractCore

/// Why a pass-thru ended, as `Finished`'s `Reason`.
public enum EndReason: String, Sendable, CaseIterable {
    case timeout, done, end, cancel, retry, silence
    case ownerVanished = "owner-vanished"
    case deviceError = "device-error"
}

/// How a pass-thru ended: the contract's result mapping.
public struct PassThruOutcome: Sendable, Equatable {
    public let resultCode: ResultCode
    public let success: Bool
    public let reason: EndReason

    /// timeout, Done, End, EndAudioPassThru and silence → SUCCESS; Cancel → ABORTED;
    /// Retry → RETRY (success); owner vanished → ABORTED; device failure → GENERIC_ERROR.
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
        case .cancel, .ownerVanished:
            resultCode = .aborted
            success = false
        case .deviceError:
            resultCode = .genericError
            success = false
        }
    }
}
