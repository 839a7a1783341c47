import ContractCore

/// The files a piece can have.
public enum AssetKind: String, Sendable, CaseIterable {
    case mixStem, preview, coverImage, attachment

    /// The `Drop` key of the fd variant (`MixStem`); the path variant adds `Path`.
    public var key: String {
        switch self {
        case .mixStem: EarshotField.mixStem.name
        case .preview: EarshotField.preview.name
        case .coverImage: EarshotField.coverImage.name
        case .attachment: EarshotField.attachment.name
        }
    }

    /// Whether the asset is audio (kept in the format dropped, transcoded on request).
    public var isAudio: Bool { self == .mixStem || self == .preview }

    /// The most bytes an asset of this kind may have.
    public var maxBytes: UInt64 {
        switch self {
        case .attachment: 30 * 1024 * 1024
        case .coverImage: 10 * 1024 * 1024
        case .mixStem, .preview: 2 * 1024 * 1024 * 1024
        }
    }
}

/// The cover image's required size.
public enum CoverImageRule {
    public static let width = 640
    public static let height = 640
}

/// Who may delete a piece: its author, root, or the service's own user.
public enum DeletePermission {
    public static func allowed(callerUID: UInt32, authorUID: UInt32, serviceUID: UInt32) -> Bool {
        callerUID == authorUID || callerUID == 0 || callerUID == serviceUID
    }
}
