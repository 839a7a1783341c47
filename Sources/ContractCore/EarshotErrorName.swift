/// Earshot's own errors, each spelled once: `org.earshot.Error.` and the case's name with
/// its first letter raised (`.invalidData` is `org.earshot.Error.InvalidData`).
public enum EarshotErrorName: String, Sendable, CaseIterable {
    case invalidData, rejected, disallowed, unsupportedResource, fileNotFound, genericError
    case pieceNotFound, assetNotFound, storageUnavailable, noSpace, damagedObject
    case titleTooShort, titleTooLong, pieceTooShort, pieceTooLong, tempoTooLow, tempoTooHigh
    case invalidLoopMarkers, invalidTimeSignature, invalidTonality, basedOnNotFound
    case invalidAudio, invalidCoverImage, attachmentTooLarge
    case invalidCategory, invalidMode, invalidOption, incompatibleOption, invalidOrientation
    case invalidPolarPattern, polarPatternNotSupported, invalidInputType, noInputDevice, dataSourceNotFound

    /// What every one of their full names starts with.
    public static let prefix = "org.earshot.Error."

    /// The last part of its name: `InvalidData`.
    public var shortName: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }

    /// The error's full name on the wire.
    public var name: String { Self.prefix + shortName }

    /// The error whose full name is `name`, if it is one of Earshot's.
    public init?(name: String) {
        guard let found = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = found
    }
}
