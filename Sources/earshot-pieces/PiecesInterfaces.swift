import EarshotContract
import EarshotDBus

/// The piece store's handlers, bound to the contract's declarations.
enum PiecesInterfaces {
    typealias Manager = PiecesContract.Manager

    static let managerPath = ObjectPath(declared: PiecesContract.managerPath)

    static func managerInterface(_ service: PiecesService) -> DBusInterface {
        DBusInterface(Manager.interface, methods: [
            DBusMethod(Manager.drop) { call in [.string(try await service.drop(call))] },
            DBusMethod(Manager.get) { call in [try await service.get(call)] },
            DBusMethod(Manager.list) { call in try await service.list(call) },
            DBusMethod(Manager.lineage) { call in try await service.lineage(call) },
            DBusMethod(Manager.openMixStem) { call in [try await service.open(call, kind: .mixStem)] },
            DBusMethod(Manager.exportMixStem) { call in try await service.export(call, kind: .mixStem) },
            DBusMethod(Manager.openPreview) { call in [try await service.open(call, kind: .preview)] },
            DBusMethod(Manager.exportPreview) { call in try await service.export(call, kind: .preview) },
            DBusMethod(Manager.openCoverImage) { call in [try await service.open(call, kind: .coverImage)] },
            DBusMethod(Manager.exportCoverImage) { call in try await service.export(call, kind: .coverImage) },
            DBusMethod(Manager.openAttachment) { call in try await service.openAttachment(call) },
            DBusMethod(Manager.exportAttachment) { call in try await service.export(call, kind: .attachment) },
            DBusMethod(Manager.delete) { call in
                try await service.delete(call)
                return []
            },
        ])
    }
}
