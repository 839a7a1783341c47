import EarshotDBus
import EarshotService
import PieceStore
import PiecesCore

/// Pieces as the contract shows them on the bus.
enum PieceValues {
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
            "Id": .string(piece.id),
            "Title": .string(draft.title),
            "Description": .string(draft.description),
            "LengthMicroseconds": .uint64(draft.lengthMicroseconds ?? 0),
            "BasedOn": .strings(draft.basedOn),
            "Tonality": .string(draft.tonality.name),
            "Listed": .boolean(draft.listed),
            "CreatedAt": .string(piece.createdAt),
            "Author": .string(piece.author),
            "SampleRate": .uint32(piece.facts.sampleRate),
            "Channels": .uint32(piece.facts.channels),
            "LoudnessLufs": .double(piece.facts.loudnessLufs),
            "TruePeakDbtp": .double(piece.facts.truePeakDbtp),
        ]
        if let tempo = draft.tempo { entries["Tempo"] = .double(tempo) }
        if let start = draft.loopStart, let end = draft.loopEnd {
            entries["LoopStartMicroseconds"] = .uint64(start)
            entries["LoopEndMicroseconds"] = .uint64(end)
        }
        if let signature = draft.timeSignature {
            entries["TimeSignatureUpper"] = .byte(signature.upper)
            entries["TimeSignatureLower"] = .byte(signature.lower)
        }
        if case .tonal(let scale, let root) = draft.tonality {
            entries["Scale"] = .array(.boolean, scale.map { .boolean($0) })
            entries["Root"] = .byte(root)
        }
        for kind in AssetKind.allCases {
            let asset = piece.dropped(kind)
            entries["Has" + kind.key] = .boolean(asset != nil)
            if let asset {
                entries[kind.key + "Size"] = .uint64(asset.size)
                if kind != .attachment { entries[kind.key + "Format"] = .string(asset.format) }
            }
        }
        if let mime = draft.attachmentMimeType { entries["AttachmentMimeType"] = .string(mime) }
        return .vardict(entries)
    }

    /// What `PieceDropped` and `List` carry: enough to show and filter a piece in a list
    /// (`Get` has the rest).
    static func summary(_ piece: StoredPiece) -> DBusValue {
        let draft = piece.draft
        var entries: [String: DBusValue] = [
            "Id": .string(piece.id),
            "Title": .string(draft.title),
            "Author": .string(piece.author),
            "CreatedAt": .string(piece.createdAt),
            "LengthMicroseconds": .uint64(draft.lengthMicroseconds ?? 0),
            "Tonality": .string(draft.tonality.name),
            "Listed": .boolean(draft.listed),
        ]
        if let tempo = draft.tempo { entries["Tempo"] = .double(tempo) }
        if let root = draft.tonality.root { entries["Root"] = .byte(root) }
        if let signature = draft.timeSignature {
            entries["TimeSignatureUpper"] = .byte(signature.upper)
            entries["TimeSignatureLower"] = .byte(signature.lower)
        }
        return .vardict(entries)
    }
}
