import ContractCore
/// `org.earshot.Pieces1`: a store of audio pieces with musical metadata, after the
/// Allihoopa SDK.
public enum PiecesContract {
    public static let busName = "org.earshot.Pieces1"
    public static let managerPath = "/org/earshot/Pieces1"

    /// The store: drop, find, read and delete pieces.
    public enum Manager {
        static let id = ArgumentDeclaration("id", "s", doc: "the piece's id")
        static let format = ArgumentDeclaration("format", "s", doc: "wave, oggVorbis, flac or aacM4A")
        static let path = ArgumentDeclaration("path", "s", doc: "where to write, with the caller's permissions")
        static let fd = ArgumentDeclaration("fd", "h", doc: "a descriptor open for reading")
        static let mimeType = ArgumentDeclaration("mimeType", "s", doc: "the attachment's MIME type")
        static let reading = [EarshotContract.invalidArgs] + EarshotContract.errors(.pieceNotFound, .assetNotFound, .invalidData,
                                                                                      .storageUnavailable, .damagedObject, .noSpace)
        static let exporting = reading + EarshotContract.errors(.fileNotFound, .disallowed)

        static func error(_ name: EarshotErrorName) -> String { name.name }

        /// The keys of `Drop`'s piece.
        public enum PieceKeys {
            public static let title = OptionKey(
                .title, "s", doc: "Its title, 1 to 50 Unicode scalars.", required: true, rules: [.range(1...50, unit: "scalars")],
                errors: [error(.titleTooShort), error(.titleTooLong)])
            public static let lengthMicroseconds = OptionKey(
                .lengthMicroseconds, "t", doc: "Its length; measured from the mix stem when absent, within 1% of it when given.",
                rules: [.range(1...1_200_000_000, unit: "µs")], errors: [error(.pieceTooShort), error(.pieceTooLong)])
            public static let description = OptionKey(.description, "s", doc: "What the piece is.", default: "\"\"",
                                                      rules: [.maxLength(140)], error: error(.invalidData))
            public static let tempo = OptionKey(.tempo, "d", doc: "Beats per minute.", rules: [.range(1...999.999, unit: "BPM")],
                                                errors: [error(.tempoTooLow), error(.tempoTooHigh)])
            public static let loopStartMicroseconds = OptionKey(
                .loopStartMicroseconds, "t", doc: "Where its loop starts; with LoopEndMicroseconds.",
                rules: [.described("both loop markers or neither, 0 ≤ start < end ≤ length")], error: error(.invalidLoopMarkers))
            public static let loopEndMicroseconds = OptionKey(
                .loopEndMicroseconds, "t", doc: "Where its loop ends; with LoopStartMicroseconds.",
                rules: [.described("both loop markers or neither, 0 ≤ start < end ≤ length")], error: error(.invalidLoopMarkers))
            public static let timeSignatureUpper = OptionKey(.timeSignatureUpper, "y", doc: "Beats per bar; with TimeSignatureLower.",
                                                             rules: [.described("1..16; checked as a pair with TimeSignatureLower")],
                                                             error: error(.invalidTimeSignature))
            public static let timeSignatureLower = OptionKey(
                "TimeSignatureLower", "y", doc: "The beat's note value; with TimeSignatureUpper.",
                rules: [.described("2, 4, 8 or 16; checked as a pair with TimeSignatureUpper")], error: error(.invalidTimeSignature))
            public static let basedOn = OptionKey(.basedOn, "as", doc: "The pieces it is based on, each once.",
                                                  rules: [.described("each must exist")], error: error(.basedOnNotFound))
            public static let tonality = OptionKey(.tonality, "s", doc: "Its tonality.", default: "unknown",
                                                   rules: [.oneOf(["unknown", "atonal", "tonal"])], error: error(.invalidTonality))
            public static let scale = OptionKey(.scale, "ab", doc: "For tonal: 12 values, C to B, at least one true.",
                                                error: error(.invalidTonality))
            public static let root = OptionKey(.root, "y", doc: "For tonal: the root, 0 (C) to 11 (B), in the scale.",
                                               rules: [.range(0...11)], error: error(.invalidTonality))
            public static let listed = OptionKey("Listed", "b", doc: "Whether List shows it to others.", default: "true")
            public static let mixStem = asset(EarshotField.mixStem.name, "The audio: WAV, Ogg Vorbis or FLAC, checked by decoding", required: true)
            public static let preview = asset(EarshotField.preview.name, "A shorter audio preview")
            public static let coverImage = asset(EarshotField.coverImage.name, "A 640×640 PNG or JPEG")
            public static let attachment = asset(EarshotField.attachment.name, "Any file of at most 30 MiB")
            public static let attachmentMimeType = OptionKey(
                .attachmentMimeType, "s", doc: "The attachment's MIME type; required with an attachment, refused without.",
                error: EarshotContract.invalidArgs)
            public static let authorUid = OptionKey(
                "AuthorUid", "u",
                doc: "Drops on behalf of this user, who becomes the author and whose rights open the …Path keys: for a "
                    + "service that drops what a user made (the orchestrator). Only root and the service's own user may give it.",
                error: error(.disallowed))
        }

        /// An asset's two keys: a descriptor, or a path.
        public struct AssetKeys: Sendable {
            public let fd: OptionKey
            public let path: OptionKey
        }

        static func asset(_ name: String, _ doc: String, required: Bool = false) -> AssetKeys {
            AssetKeys(fd: OptionKey(name, "h", doc: doc + " (a descriptor open for reading)."),
                      path: OptionKey(name + "Path", "s", doc: doc + " (a path read with the caller's permissions).",
                                      rules: [.described("an absolute path; give \(name) or \(name)Path, not both"
                                                         + (required ? "; one is required" : ""))],
                                      error: EarshotContract.invalidArgs))
        }

        /// The piece's metadata, after Allihoopa's rules: the keys `Drop` takes besides its
        /// title, length and assets, which `RecordPiece` passes on.
        public static let metadataKeys = [
            PieceKeys.description, PieceKeys.tempo, PieceKeys.loopStartMicroseconds, PieceKeys.loopEndMicroseconds,
            PieceKeys.timeSignatureUpper, PieceKeys.timeSignatureLower, PieceKeys.basedOn, PieceKeys.tonality, PieceKeys.scale,
            PieceKeys.root, PieceKeys.listed,
        ]

        /// The assets in the order `Drop` documents them.
        public static let assets = [PieceKeys.mixStem, PieceKeys.preview, PieceKeys.coverImage, PieceKeys.attachment]

        public static let pieceKeys = [PieceKeys.title, PieceKeys.lengthMicroseconds] + metadataKeys
            + assets.flatMap { [$0.fd, $0.path] } + [PieceKeys.attachmentMimeType, PieceKeys.authorUid]

        /// What the store adds to a piece in `Get`, `List` and `PieceDropped`.
        public enum StoredKeys {
            public static let id = OptionKey("Id", "s", doc: "The piece's id.")
            public static let createdAt = OptionKey("CreatedAt", "s", doc: "When it was dropped (RFC 3339 UTC, milliseconds).")
            public static let author = OptionKey(
                "Author", "s", doc: "Who dropped it: the caller's user name; `user@host` on a shared catalogue.")
            public static let sampleRate = OptionKey(.sampleRate, "u", doc: "The mix stem's rate in Hz.")
            public static let channels = OptionKey("Channels", "u", doc: "The mix stem's channels.")
            public static let loudnessLufs = OptionKey("LoudnessLufs", "d", doc: "The mix stem's EBU R128 integrated loudness.")
            public static let truePeakDbtp = OptionKey("TruePeakDbtp", "d", doc: "The mix stem's true peak in dBTP.")

            /// `Has…`: whether the asset (named by its descriptor key, `MixStem`, …) was dropped.
            public static func has(_ asset: String) -> OptionKey {
                OptionKey("Has" + asset, "b", doc: "Whether the \(asset) was dropped.")
            }
            /// `…Size`: the dropped asset's size in bytes.
            public static func size(_ asset: String) -> OptionKey {
                OptionKey(asset + "Size", "t", doc: "The dropped \(asset)'s size in bytes.")
            }
            /// `…Format`: the dropped audio or image format (not for the attachment).
            public static func format(_ asset: String) -> OptionKey {
                OptionKey(asset + "Format", "s", doc: "The dropped \(asset)'s format.")
            }
        }

        /// The keys `Get` returns (those of a piece's absent parts are left out).
        public static let storedPieceKeys: [OptionKey] = [StoredKeys.id, StoredKeys.createdAt, StoredKeys.author, PieceKeys.title,
                                                          PieceKeys.lengthMicroseconds] + metadataKeys
            + [StoredKeys.sampleRate, StoredKeys.channels, StoredKeys.loudnessLufs, StoredKeys.truePeakDbtp]
            + assets.flatMap { asset in
                [StoredKeys.has(asset.fd.name), StoredKeys.size(asset.fd.name)]
                    + (asset.fd.name == PieceKeys.attachment.fd.name ? [] : [StoredKeys.format(asset.fd.name)])
            }
            + [PieceKeys.attachmentMimeType]

        /// The keys `List` and `PieceDropped` carry: enough to show and filter a piece.
        public static let summaryKeys: [OptionKey] = [
            StoredKeys.id, PieceKeys.title, StoredKeys.author, StoredKeys.createdAt, PieceKeys.lengthMicroseconds, PieceKeys.tonality,
            PieceKeys.listed, PieceKeys.tempo, PieceKeys.root, PieceKeys.timeSignatureUpper, PieceKeys.timeSignatureLower,
        ]

        /// The keys of `List`'s query.
        public enum QueryKeys {
            public static let titleContains = OptionKey("TitleContains", "s", doc: "Titles containing this text, ignoring case.",
                                                        rules: [.maxLength(200)], error: EarshotContract.invalidArgs)
            public static let tempoMin = OptionKey(.tempoMin, "d", doc: "Tempo at least this many BPM (pieces without a tempo are left out).",
                                                   rules: [.described("not above TempoMax")], error: error(.invalidData))
            public static let tempoMax = OptionKey(.tempoMax, "d", doc: "Tempo at most this many BPM.")
            public static let timeSignatureUpper = OptionKey(.timeSignatureUpper, "y", doc: "Beats per bar.")
            public static let timeSignatureLower = OptionKey("TimeSignatureLower", "y", doc: "The beat's note value.")
            public static let tonality = OptionKey(.tonality, "s", doc: "This tonality.", rules: [.oneOf(["unknown", "atonal", "tonal"])],
                                                   error: EarshotContract.invalidArgs)
            public static let root = OptionKey(.root, "y", doc: "This root.", rules: [.range(0...11)], error: EarshotContract.invalidArgs)
            public static let basedOn = OptionKey(.basedOn, "s", doc: "Direct children of this piece.")
            public static let author = OptionKey("Author", "s", doc: "Dropped by this author (user, or user@host on a shared catalogue).")
            public static let createdAfter = OptionKey("CreatedAfter", "s", doc: "Created after this time.",
                                                       rules: [.described("RFC 3339, e.g. 2026-11-22T05:00:00Z")],
                                                       error: EarshotContract.invalidArgs)
            public static let createdBefore = OptionKey("CreatedBefore", "s", doc: "Created before this time.",
                                                        rules: [.described("RFC 3339, e.g. 2026-11-22T05:00:00Z")],
                                                        error: EarshotContract.invalidArgs)
            public static let sortBy = OptionKey("SortBy", "s", doc: "The order.", default: "created",
                                                 rules: [.oneOf(["created", "title", "tempo", "length"])], error: EarshotContract.invalidArgs)
            public static let descending = OptionKey("Descending", "b", doc: "Reverse the order.", default: "false")
            public static let offset = OptionKey("Offset", "u", doc: "Matches to skip.", default: "0")
            public static let limit = OptionKey(.limit, "u", doc: "Pieces per page.", default: "50", rules: [.range(1...500)],
                                                error: EarshotContract.invalidArgs)
        }

        public static let queryKeys = [
            QueryKeys.titleContains, QueryKeys.tempoMin, QueryKeys.tempoMax, QueryKeys.timeSignatureUpper,
            QueryKeys.timeSignatureLower, QueryKeys.tonality, QueryKeys.root, QueryKeys.basedOn, QueryKeys.author,
            QueryKeys.createdAfter, QueryKeys.createdBefore, QueryKeys.sortBy, QueryKeys.descending, QueryKeys.offset, QueryKeys.limit,
        ]

        public static let drop = MethodDeclaration(
            "Drop", doc: "Validates and stores a piece; replies with its new id.",
            in: [ArgumentDeclaration("piece", "a{sv}", doc: "the piece's metadata and assets", keys: pieceKeys)], out: [id],
            errors: [EarshotContract.invalidArgs] + EarshotContract.errors(
                .titleTooShort, .titleTooLong, .pieceTooShort, .pieceTooLong, .tempoTooLow, .tempoTooHigh,
                .invalidLoopMarkers, .invalidTimeSignature, .invalidTonality, .basedOnNotFound, .invalidAudio,
                .invalidCoverImage, .attachmentTooLarge, .invalidData, .fileNotFound, .disallowed, .noSpace, .storageUnavailable))
        public static let get = MethodDeclaration(
            "Get", doc: "Everything dropped with a piece, and what the store measured.",
            in: [id], out: [ArgumentDeclaration("piece", "a{sv}", doc: "the piece", keys: storedPieceKeys)],
            errors: EarshotContract.errors(.pieceNotFound, .storageUnavailable))
        public static let list = MethodDeclaration(
            "List", doc: "A page of the pieces a query matches, and how many match in all.",
            in: [ArgumentDeclaration("query", "a{sv}", doc: "filters, order and page", keys: queryKeys)],
            out: [ArgumentDeclaration("pieces", "aa{sv}", doc: "the page", keys: summaryKeys),
                  ArgumentDeclaration("total", "u", doc: "all matches")],
            errors: [EarshotContract.invalidArgs] + EarshotContract.errors(.invalidData, .storageUnavailable))
        public static let lineage = MethodDeclaration(
            "Lineage", doc: "The pieces a piece is based on and those based on it, transitively, nearest first.",
            in: [id], out: [ArgumentDeclaration("ancestors", "as", doc: "what it is based on"),
                            ArgumentDeclaration("descendants", "as", doc: "what is based on it")],
            errors: EarshotContract.errors(.pieceNotFound, .storageUnavailable))
        public static let openMixStem = MethodDeclaration(
            "OpenMixStem", doc: "The mix stem in a format, transcoded on first request and kept.",
            in: [id, format], out: [fd], errors: reading)
        public static let exportMixStem = MethodDeclaration(
            "ExportMixStem", doc: "Writes the mix stem in a format to a path.", in: [id, format, path], errors: exporting)
        public static let openPreview = MethodDeclaration(
            "OpenPreview", doc: "The preview in a format (the mix stem when none was dropped).",
            in: [id, format], out: [fd], errors: reading)
        public static let exportPreview = MethodDeclaration(
            "ExportPreview", doc: "Writes the preview in a format to a path.", in: [id, format, path], errors: exporting)
        public static let openCoverImage = MethodDeclaration(
            "OpenCoverImage", doc: "The cover image as dropped.", in: [id], out: [fd], errors: reading)
        public static let exportCoverImage = MethodDeclaration(
            "ExportCoverImage", doc: "Writes the cover image to a path.", in: [id, path], errors: exporting)
        public static let openAttachment = MethodDeclaration(
            "OpenAttachment", doc: "The attachment as dropped, with its MIME type.", in: [id], out: [fd, mimeType], errors: reading)
        public static let exportAttachment = MethodDeclaration(
            "ExportAttachment", doc: "Writes the attachment to a path; replies with its MIME type.",
            in: [id, path], out: [mimeType], errors: exporting)
        public static let delete = MethodDeclaration(
            "Delete", doc: "Deletes a piece (its author, root or the service's user).",
            in: [id], errors: EarshotContract.errors(.pieceNotFound, .disallowed, .storageUnavailable, .noSpace))

        public static let pieceDropped = SignalDeclaration(
            "PieceDropped", doc: "A piece was dropped, on this host or another sharing the catalogue (broadcast).",
            [id, ArgumentDeclaration("summary", "a{sv}", doc: "what List shows of it", keys: summaryKeys)])
        public static let pieceDeleted = SignalDeclaration(
            "PieceDeleted", doc: "A piece was deleted (broadcast).", [id])
        public static let changesMissed = SignalDeclaration(
            "ChangesMissed",
            doc: "This host was away from the shared catalogue longer than it keeps its changes (30 days): some drops and deletions made meanwhile were not announced. Whatever a client shows of the catalogue should be read again (List). Broadcast, once each time.",
            [])

        public static let count = PropertyDeclaration("Count", "u", doc: "How many pieces the store holds.")

        public static let interface = InterfaceDeclaration(
            busName, doc: "Drop, find, read and delete pieces.",
            methods: [drop, get, list, lineage, openMixStem, exportMixStem, openPreview, exportPreview, openCoverImage,
                      exportCoverImage, openAttachment, exportAttachment, delete],
            signals: [pieceDropped, pieceDeleted, changesMissed],
            properties: [count])
    }

    public static let service = ServiceDeclaration(
        executable: "earshot-pieces", busName: busName,
        doc: "A store of audio pieces with musical metadata: validation, SQLite or a shared PostgreSQL catalogue, assets over file descriptors.",
        managerPath: managerPath, interfaces: [Manager.interface],
        notes: [
            Manager.interface.name: [
                "A piece is visible only when complete: a crash at any moment leaves the whole piece or none of it, and no "
                    + "orphaned files after the next start.",
                "`Get` returns everything dropped (assets as `Has…` booleans and sizes) with `Id`, `CreatedAt` (RFC 3339 "
                    + "UTC), `Author` (the dropping caller's user name; `user@host` on a shared catalogue), `SampleRate`, "
                    + "`Channels`, `LoudnessLufs` (EBU R128 integrated) and `TruePeakDbtp`. `List` returns the same for "
                    + "each piece of its page; `total` counts every match.",
                "Formats are `wave`, `oggVorbis`, `flac` and `aacM4A`. One that was not dropped is transcoded on first "
                    + "request and kept. A preview falls back to the mix stem when none was dropped.",
                "Unlisted pieces are seen only by their author. `Delete` is for the author, uid 0 and the service's user.",
                "With `--database postgresql://…` hosts share one catalogue: `PieceDropped`, `PieceDeleted` and `Count` "
                    + "follow every host's changes, and calls fail with `StorageUnavailable` while the database is away.",
            ],
        ])
}
