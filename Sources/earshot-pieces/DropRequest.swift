import ContractCore
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

    static let scaleType = try! DBusType(signature: "ab")

    /// Reads and checks everything that needs no file: D-Bus types and unknown keys
    /// (`InvalidArgs` naming the key), then Allihoopa's rules (their named errors).
    static func read(_ call: MethodCall) throws(DBusError) -> DropRequest {
        var options = try call.options(0)
        let title = try options.require("Title", .string)
        let description = try options.get("Description", .string) ?? ""
        let length = try options.get("LengthMicroseconds", .uint64())
        let tempo = try options.get("Tempo", .double())
        let loopStart = try options.get("LoopStartMicroseconds", .uint64())
        let loopEnd = try options.get("LoopEndMicroseconds", .uint64())
        let upper = try options.get("TimeSignatureUpper", .uint8())
        let lower = try options.get("TimeSignatureLower", .uint8())
        let basedOn = try options.get("BasedOn", .strings) ?? []
        let tonality = try options.get("Tonality", .string) ?? "unknown"
        let scale = try options.get("Scale", .exactly(scaleType)).map { value in (value.arrayValue ?? []).compactMap(\.boolValue) }
        let root = try options.get("Root", .uint8())
        let listed = try options.get("Listed", .bool) ?? true
        let mime = try options.get("AttachmentMimeType", .string)
        var sources: [AssetKind: AssetSource] = [:]
        for kind in AssetKind.allCases {
            let fd = try options.get(kind.key, .fd)
            let path = try options.get(kind.key + "Path", .string)
            switch (fd, path) {
            case (let fd?, nil): sources[kind] = .fd(fd)
            case (nil, let path?):
                guard path.hasPrefix("/") else { throw options.invalid(kind.key + "Path", "'\(path)' is not an absolute path") }
                sources[kind] = .path(path)
            case (nil, nil): break
            case (_?, _?): throw options.invalid(kind.key, "give \(kind.key) or \(kind.key)Path, not both")
            }
        }
        try options.finish()
        guard sources[.mixStem] != nil else { throw .invalidArgs("MixStem: a mix stem is required (MixStem h or MixStemPath s)") }
        if mime != nil, sources[.attachment] == nil {
            throw .invalidArgs("AttachmentMimeType: given without an Attachment")
        }
        if sources[.attachment] != nil, mime == nil {
            throw .invalidArgs("AttachmentMimeType: an Attachment needs its MIME type")
        }
        return try DBusError.readingRequest {
            if (upper == nil) != (lower == nil) {
                throw RuleViolation("InvalidTimeSignature", field: upper == nil ? "TimeSignatureUpper" : "TimeSignatureLower",
                                    "give both TimeSignatureUpper and TimeSignatureLower or neither")
            }
            var draft = PieceDraft(title: title, description: description, lengthMicroseconds: length, tempo: tempo,
                                   loopStart: loopStart, loopEnd: loopEnd, basedOn: basedOn,
                                   tonality: try Tonality(name: tonality, scale: scale, root: root), listed: listed,
                                   attachmentMimeType: mime)
            if let upper, let lower { draft.timeSignature = try TimeSignature(upper: upper, lower: lower) }
            if Set(basedOn).count != basedOn.count { throw RuleViolation.invalidData("BasedOn", "lists a piece twice") }
            try draft.validate()
            return DropRequest(draft: draft, sources: sources)
        }
    }
}
