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
        static let reading = [EarshotContract.invalidArgs] + EarshotContract.errors("PieceNotFound", "AssetNotFound", "InvalidData",
                                                                                      "StorageUnavailable")
        static let exporting = reading + EarshotContract.errors("FileNotFound", "NoSpace")

        public static let drop = MethodDeclaration(
            "Drop", doc: "Validates and stores a piece; replies with its new id.",
            in: [ArgumentDeclaration("piece", "a{sv}", doc: "the piece's metadata and assets")], out: [id],
            errors: [EarshotContract.invalidArgs] + EarshotContract.errors(
                "TitleTooShort", "TitleTooLong", "PieceTooShort", "PieceTooLong", "TempoTooLow", "TempoTooHigh",
                "InvalidLoopMarkers", "InvalidTimeSignature", "InvalidTonality", "BasedOnNotFound", "InvalidAudio",
                "InvalidCoverImage", "AttachmentTooLarge", "InvalidData", "FileNotFound", "NoSpace", "StorageUnavailable"))
        public static let get = MethodDeclaration(
            "Get", doc: "Everything dropped with a piece, and what the store measured.",
            in: [id], out: [ArgumentDeclaration("piece", "a{sv}", doc: "the piece")],
            errors: EarshotContract.errors("PieceNotFound", "StorageUnavailable"))
        public static let list = MethodDeclaration(
            "List", doc: "A page of the pieces a query matches, and how many match in all.",
            in: [ArgumentDeclaration("query", "a{sv}", doc: "filters, order and page")],
            out: [ArgumentDeclaration("pieces", "aa{sv}", doc: "the page"), ArgumentDeclaration("total", "u", doc: "all matches")],
            errors: [EarshotContract.invalidArgs] + EarshotContract.errors("InvalidData", "StorageUnavailable"))
        public static let lineage = MethodDeclaration(
            "Lineage", doc: "The pieces a piece is based on and those based on it, transitively, nearest first.",
            in: [id], out: [ArgumentDeclaration("ancestors", "as", doc: "what it is based on"),
                            ArgumentDeclaration("descendants", "as", doc: "what is based on it")],
            errors: EarshotContract.errors("PieceNotFound", "StorageUnavailable"))
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
            in: [id], errors: EarshotContract.errors("PieceNotFound", "Disallowed", "StorageUnavailable"))

        public static let pieceDropped = SignalDeclaration(
            "PieceDropped", doc: "A piece was dropped, on this host or another sharing the catalogue (broadcast).",
            [id, ArgumentDeclaration("summary", "a{sv}", doc: "Title, Author, Tempo and what List shows")])
        public static let pieceDeleted = SignalDeclaration(
            "PieceDeleted", doc: "A piece was deleted (broadcast).", [id])

        public static let count = PropertyDeclaration("Count", "u", doc: "How many pieces the store holds.")

        public static let interface = InterfaceDeclaration(
            busName, doc: "Drop, find, read and delete pieces.",
            methods: [drop, get, list, lineage, openMixStem, exportMixStem, openPreview, exportPreview, openCoverImage,
                      exportCoverImage, openAttachment, exportAttachment, delete],
            signals: [pieceDropped, pieceDeleted],
            properties: [count])
    }

    public static let service = ServiceDeclaration(
        executable: "earshot-pieces", busName: busName,
        doc: "A store of audio pieces with musical metadata: validation, SQLite or a shared PostgreSQL catalogue, assets over file descriptors.",
        managerPath: managerPath, interfaces: [Manager.interface])
}
