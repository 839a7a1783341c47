import ContractCore
import EarshotContract
import EarshotDBus

extension EarshotError {
    /// Every error the contract declares, one case each (`EarshotContract.errorMeanings`
    /// lists the same names; a test keeps the two equal), and the standard errors any call
    /// may meet. A name outside both is `.other`.
    public enum Code: Sendable, Equatable, CaseIterable {
        // The D-Bus standard errors the contract uses.
        case invalidArgs, accessDenied, limitsExceeded
        // Earshot's own.
        case invalidData, rejected, disallowed, unsupportedResource, fileNotFound, genericError
        case pieceNotFound, assetNotFound, storageUnavailable, noSpace, damagedObject
        case titleTooShort, titleTooLong, pieceTooShort, pieceTooLong, tempoTooLow, tempoTooHigh
        case invalidLoopMarkers, invalidTimeSignature, invalidTonality, basedOnNotFound
        case invalidAudio, invalidCoverImage, attachmentTooLarge
        case invalidCategory, invalidMode, invalidOption, incompatibleOption, invalidOrientation
        case invalidPolarPattern, polarPatternNotSupported, invalidInputType, noInputDevice, dataSourceNotFound
        // What any call may meet besides: the service failed, is not on the bus, or did not answer.
        case failed, serviceMissing, noReply, other

        /// The error name on the wire; nil for `.serviceMissing` (two names) and `.other`.
        public var errorName: String? {
            switch self {
            case .invalidArgs: DBusError.prefix + "InvalidArgs"
            case .accessDenied: DBusError.prefix + "AccessDenied"
            case .limitsExceeded: DBusError.prefix + "LimitsExceeded"
            case .failed: DBusError.prefix + "Failed"
            case .noReply: DBusError.prefix + "NoReply"
            case .serviceMissing, .other: nil
            default: EarshotContract.errorPrefix + Self.capitalised(String(describing: self))
            }
        }

        /// The code of an error name.
        public init(errorName name: String) {
            if name == DBusError.prefix + "ServiceUnknown" || name == DBusError.prefix + "NameHasNoOwner" {
                self = .serviceMissing
            } else {
                self = Self.byName[name] ?? .other
            }
        }

        private static let byName: [String: Code] = Dictionary(
            uniqueKeysWithValues: allCases.compactMap { code in code.errorName.map { ($0, code) } })

        private static func capitalised(_ name: String) -> String { name.prefix(1).uppercased() + name.dropFirst() }
    }

    /// What kind of error this is, for a `switch`.
    public var code: Code { Code(errorName: name) }

    /// SmartDeviceLink's result code for a refusal of this kind, as a pass-thru or alert
    /// would report it; nil for errors SDL has no code for.
    public var resultCode: ResultCode? {
        switch code {
        case .rejected: .rejected
        case .invalidData: .invalidData
        case .disallowed: .disallowed
        case .unsupportedResource: .unsupportedResource
        case .fileNotFound: .fileNotFound
        case .genericError: .genericError
        default: nil
        }
    }
}
