import EarshotContract
import EarshotDBus
import EarshotService
import PieceStore
import PiecesCore

/// Pieces as the contract shows them on the bus.
enum PieceValues {
    private typealias Keys = PiecesContract.Manager.PieceKeys
    private typealias Stored = PiecesContract.Manager.StoredKeys

    /// Now, as stored: RFC 3339 UTC with milliseconds.
    static func now() -> String { UTCTime.now(zoneDesignator: true) }

    /// A client's RFC 3339 time in the stored form (UTC, milliseconds, the fraction past
    /// them dropped), or nil when it is not one. Read by `UTCTime`, not by Foundation's ISO
    /// 8601 style, whose calendar would open ICU's zone data at the first such query.
    static func normalized(_ text: String) -> String? {
        guard let time = UTCTime.parse(text) else { return nil }
        return UTCTime.text(seconds: time.seconds, nanoseconds: time.nanoseconds, zoneDesignator: true)
    }

    /// Everything `Get` returns.
    static func full(_ piece: StoredPiece) -> DBusValue {
        let draft = piece.draft
        var entries: [String: DBusValue] = [
            Stored.id.name: .string(piece.id),
            Keys.title.name: .string(draft.title),
            Keys.description.name: .string(draft.description),
            Keys.lengthMicroseconds.name: .uint64(draft.lengthMicroseconds ?? 0),
            Keys.basedOn.name: .strings(draft.basedOn),
            Keys.tonality.name: .string(draft.tonality.name),
            Keys.listed.name: .boolean(draft.listed),
            Stored.createdAt.name: .string(piece.createdAt),
            Stored.author.name: .string(piece.author),
            Stored.sampleRate.name: .uint32(piece.facts.sampleRate),
            Stored.channels.name: .uint32(piece.facts.channels),
            Stored.loudnessLufs.name: .double(piece.facts.loudnessLufs),
            Stored.truePeakDbtp.name: .double(piece.facts.truePeakDbtp),
        ]
        if let tempo = draft.tempo { entries[Keys.tempo.name] = .double(tempo) }
        if let start = draft.loopStart, let end = draft.loopEnd {
            entries[Keys.loopStartMicroseconds.name] = .uint64(start)
            entries[Keys.loopEndMicroseconds.name] = .uint64(end)
        }
        if let signature = draft.timeSignature {
            entries[Keys.timeSignatureUpper.name] = .byte(signature.upper)
            entries[Keys.timeSignatureLower.name] = .byte(signature.lower)
        }
        if case .tonal(let scale, let root) = draft.tonality {
            entries[Keys.scale.name] = .array(.boolean, scale.map { .boolean($0) })
            entries[Keys.root.name] = .byte(root)
        }
        for kind in AssetKind.allCases {
            let asset = piece.dropped(kind)
            entries[Stored.has(kind.key).name] = .boolean(asset != nil)
            if let asset {
                entries[Stored.size(kind.key).name] = .uint64(asset.size)
                if kind != .attachment { entries[Stored.format(kind.key).name] = .string(asset.format) }
            }
        }
        if let mime = draft.attachmentMimeType { entries[Keys.attachmentMimeType.name] = .string(mime) }
        return .vardict(entries)
    }

    /// What `PieceDropped` and `List` carry: enough to show and filter a piece in a list
    /// (`Get` has the rest).
    static func summary(_ piece: StoredPiece) -> DBusValue {
        let draft = piece.draft
        var entries: [String: DBusValue] = [
            Stored.id.name: .string(piece.id),
            Keys.title.name: .string(draft.title),
            Stored.author.name: .string(piece.author),
            Stored.createdAt.name: .string(piece.createdAt),
            Keys.lengthMicroseconds.name: .uint64(draft.lengthMicroseconds ?? 0),
            Keys.tonality.name: .string(draft.tonality.name),
            Keys.listed.name: .boolean(draft.listed),
        ]
        if let tempo = draft.tempo { entries[Keys.tempo.name] = .double(tempo) }
        if let root = draft.tonality.root { entries[Keys.root.name] = .byte(root) }
        if let signature = draft.timeSignature {
            entries[Keys.timeSignatureUpper.name] = .byte(signature.upper)
            entries[Keys.timeSignatureLower.name] = .byte(signature.lower)
        }
        return .vardict(entries)
    }
}
