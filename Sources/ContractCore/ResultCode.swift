/// SmartDeviceLink's result codes, as the contract spells them.
public enum ResultCode: String, Sendable, CaseIterable {
    case success = "SUCCESS"
    case aborted = "ABORTED"
    case rejected = "REJECTED"
    case retry = "RETRY"
    case warnings = "WARNINGS"
    case invalidData = "INVALID_DATA"
    case disallowed = "DISALLOWED"
    case genericError = "GENERIC_ERROR"
    case unsupportedResource = "UNSUPPORTED_RESOURCE"
    case fileNotFound = "FILE_NOT_FOUND"
    case ignored = "IGNORED"
}
