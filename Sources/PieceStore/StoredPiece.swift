import PiecesCore

/// One file of a piece as stored: which asset, in which format, which object.
public struct StoredAsset: Sendable, Equatable {
    public let kind: AssetKind
    /// Audio: `wave`, `oggVorbis`, `flac` or `aacM4A`; cover image: `png` or `jpeg`;
    /// attachment: "".
    public let format: String
    public let hash: String
    public let size: UInt64
    /// Dropped by the client (false: a transcode made here).
    public let dropped: Bool

    public init(kind: AssetKind, format: String, hash: String, size: UInt64, dropped: Bool) {
        self.kind = kind
        self.format = format
        self.hash = hash
        self.size = size
        self.dropped = dropped
    }
}

/// What the audio analysis of the mix stem found.
public struct MixStemFacts: Sendable, Equatable {
    public let sampleRate: UInt32
    public let channels: UInt32
    public let loudnessLufs: Double
    public let truePeakDbtp: Double

    public init(sampleRate: UInt32, channels: UInt32, loudnessLufs: Double, truePeakDbtp: Double) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.loudnessLufs = loudnessLufs
        self.truePeakDbtp = truePeakDbtp
    }
}

/// A complete piece as the store holds it.
public struct StoredPiece: Sendable, Equatable {
    public let id: String
    /// With `lengthMicroseconds` set (given or measured).
    public let draft: PieceDraft
    /// RFC 3339 UTC with milliseconds, e.g. `2026-11-22T05:00:00.123Z`.
    public let createdAt: String
    public let author: String
    public let authorUID: UInt32
    public let facts: MixStemFacts
    /// The dropped assets and the transcodes, in kind order.
    public let assets: [StoredAsset]

    public init(id: String, draft: PieceDraft, createdAt: String, author: String, authorUID: UInt32,
                facts: MixStemFacts, assets: [StoredAsset]) {
        self.id = id
        self.draft = draft
        self.createdAt = createdAt
        self.author = author
        self.authorUID = authorUID
        self.facts = facts
        self.assets = assets
    }

    /// The asset of `kind` as dropped.
    public func dropped(_ kind: AssetKind) -> StoredAsset? {
        assets.first { $0.kind == kind && $0.dropped }
    }

    /// The asset of `kind` in `format`, dropped or transcoded.
    public func asset(_ kind: AssetKind, format: String) -> StoredAsset? {
        assets.first { $0.kind == kind && $0.format == format }
    }
}
