import ContractCore
import EarshotContract
import EarshotDBus
import EarshotService
import PiecesCore

/// Where an asset's bytes come from: a file descriptor the caller passed, or a path.
enum AssetSource: Sendable {
    case fd(UnixFD)
    case path(String)
}

/// A `Drop` request: the piece's metadata, checked, and its assets' sources.
struct DropRequest: Sendable {
    var draft: PieceDraft
    var sources: [AssetKind: AssetSource]
    /// The user the piece is dropped for (`AuthorUid`), when not the caller.
    var authorUID: UInt32?

    typealias Keys = PiecesContract.Manager.PieceKeys

    /// The contract's two keys for an asset.
    static func keys(_ kind: AssetKind) -> PiecesContract.Manager.AssetKeys {
        switch kind {
        case .mixStem: Keys.mixStem
        case .preview: Keys.preview
        case .coverImage: Keys.coverImage
        case .attachment: Keys.attachment
        }
    }

    /// Reads and checks everything that needs no file: the contract's keys (types, unknown
    /// keys, defaults), then Allihoopa's rules (their named errors).
    static func read(_ call: MethodCall) throws(DBusError) -> DropRequest {
        let options = try call.request(PiecesContract.Manager.drop)
        let title: String = try options.require(Keys.title)
        let description: String = try options.require(Keys.description)
        let length: UInt64? = try options.get(Keys.lengthMicroseconds)
        let tempo: Double? = try options.get(Keys.tempo)
        let loopStart: UInt64? = try options.get(Keys.loopStartMicroseconds)
        let loopEnd: UInt64? = try options.get(Keys.loopEndMicroseconds)
        let upper: UInt8? = try options.get(Keys.timeSignatureUpper)
        let lower: UInt8? = try options.get(Keys.timeSignatureLower)
        let basedOn: [String] = try options.get(Keys.basedOn) ?? []
        let tonality: String = try options.require(Keys.tonality)
        let scale: [Bool]? = try options.get(Keys.scale)
        let root: UInt8? = try options.get(Keys.root)
        let listed: Bool = try options.require(Keys.listed)
        let mime: String? = try options.get(Keys.attachmentMimeType)
        let authorUID: UInt32? = try options.get(Keys.authorUid)
        var sources: [AssetKind: AssetSource] = [:]
        for kind in AssetKind.allCases {
            let keys = keys(kind)
            let fd = try options.fd(keys.fd)
            let path: String? = try options.get(keys.path)
            switch (fd, path) {
            case (let fd?, nil): sources[kind] = .fd(fd)
            case (nil, let path?):
                guard path.hasPrefix("/") else { throw options.invalid(keys.path, "'\(path)' is not an absolute path") }
                sources[kind] = .path(path)
            case (nil, nil): break
            case (_?, _?): throw .invalidArgs("\(keys.fd.name): give \(keys.fd.name) or \(keys.path.name), not both")
            }
        }
        let mixStem = keys(.mixStem)
        guard sources[.mixStem] != nil else {
            throw .invalidArgs("\(mixStem.fd.name): a mix stem is required (\(mixStem.fd.name) h or \(mixStem.path.name) s)")
        }
        if mime != nil, sources[.attachment] == nil {
            throw options.invalid(Keys.attachmentMimeType, "given without an Attachment")
        }
        if sources[.attachment] != nil, mime == nil {
            throw options.invalid(Keys.attachmentMimeType, "an Attachment needs its MIME type")
        }
        return try DBusError.readingRequest {
            if (upper == nil) != (lower == nil) {
                throw RuleViolation(.invalidTimeSignature, field: upper == nil ? Keys.timeSignatureUpper.name : Keys.timeSignatureLower.name,
                                    "give both \(PiecesContract.Manager.PieceKeys.timeSignatureUpper.name) and \(PiecesContract.Manager.PieceKeys.timeSignatureLower.name) or neither")
            }
            var draft = PieceDraft(title: title, description: description, lengthMicroseconds: length, tempo: tempo,
                                   loopStart: loopStart, loopEnd: loopEnd, basedOn: basedOn,
                                   tonality: try Tonality(name: tonality, scale: scale, root: root), listed: listed,
                                   attachmentMimeType: mime)
            if let upper, let lower { draft.timeSignature = try TimeSignature(upper: upper, lower: lower) }
            if Set(basedOn).count != basedOn.count { throw RuleViolation.invalidData(Keys.basedOn.name, "lists a piece twice") }
            try draft.validate()
            return DropRequest(draft: draft, sources: sources, authorUID: authorUID)
        }
    }
}
