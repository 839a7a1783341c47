import EarshotDBus

/// The one declaration of the piece store's interface.
enum PiecesInterfaces {
    static let busName = "org.earshot.Pieces1"
    static let managerPath: ObjectPath = "/org/earshot/Pieces1"
    static let manager = "org.earshot.Pieces1"

    static func managerInterface(_ service: PiecesService) -> DBusInterface {
        let id = DBusArgument("id", "s"), format = DBusArgument("format", "s"), path = DBusArgument("path", "s")
        let fd = DBusArgument("fd", "h"), mime = DBusArgument("mimeType", "s")
        return DBusInterface(manager, methods: [
            DBusMethod("Drop", in: [DBusArgument("piece", "a{sv}")], out: [id]) { call in
                [.string(try await service.drop(call))]
            },
            DBusMethod("Get", in: [id], out: [DBusArgument("piece", "a{sv}")]) { call in
                [try await service.get(call)]
            },
            DBusMethod("List", in: [DBusArgument("query", "a{sv}")],
                       out: [DBusArgument("pieces", "aa{sv}"), DBusArgument("total", "u")]) { call in
                try await service.list(call)
            },
            DBusMethod("Lineage", in: [id], out: [DBusArgument("ancestors", "as"), DBusArgument("descendants", "as")]) { call in
                try await service.lineage(call)
            },
            DBusMethod("OpenMixStem", in: [id, format], out: [fd]) { call in
                [try await service.open(call, kind: .mixStem)]
            },
            DBusMethod("ExportMixStem", in: [id, format, path]) { call in
                try await service.export(call, kind: .mixStem)
            },
            DBusMethod("OpenPreview", in: [id, format], out: [fd]) { call in
                [try await service.open(call, kind: .preview)]
            },
            DBusMethod("ExportPreview", in: [id, format, path]) { call in
                try await service.export(call, kind: .preview)
            },
            DBusMethod("OpenCoverImage", in: [id], out: [fd]) { call in
                [try await service.open(call, kind: .coverImage)]
            },
            DBusMethod("ExportCoverImage", in: [id, path]) { call in
                try await service.export(call, kind: .coverImage)
            },
            DBusMethod("OpenAttachment", in: [id], out: [fd, mime]) { call in
                try await service.openAttachment(call)
            },
            DBusMethod("ExportAttachment", in: [id, path], out: [mime]) { call in
                try await service.export(call, kind: .attachment)
            },
            DBusMethod("Delete", in: [id]) { call in
                try await service.delete(call)
                return []
            },
        ], properties: [
            DBusProperty("Count", "u"),
        ], signals: [
            DBusSignal("PieceDropped", [id, DBusArgument("summary", "a{sv}")]),
            DBusSignal("PieceDeleted", [id]),
        ])
    }
}
