import EarshotDBus

/// The one declaration of each interface the orchestrator serves.
enum OrchestratorInterfaces {
    static let busName = "org.earshot.Orchestrator1"
    static let managerPath: ObjectPath = "/org/earshot/Orchestrator1"
    static let manager = "org.earshot.Orchestrator1"
    static let job = "org.earshot.Orchestrator1.Job"

    static func managerInterface(_ service: OrchestratorService) -> DBusInterface {
        DBusInterface(manager, methods: [
            DBusMethod("RecordPiece", in: [DBusArgument("request", "a{sv}")], out: [DBusArgument("job", "o")]) { call in
                [.objectPath(try await service.recordPiece(call))]
            },
        ], properties: [
            DBusProperty("Services", "a{s(sb)}"),
        ], signals: [
            DBusSignal("ServiceChanged", [DBusArgument("name", "s"), DBusArgument("running", "b")]),
        ])
    }

    static func jobInterface(_ runner: JobRunner) -> DBusInterface {
        DBusInterface(job, methods: [
            DBusMethod("Cancel") { call in
                try await runner.cancel(call)
                return []
            },
        ], properties: [
            DBusProperty("State", "s"),
            DBusProperty("PieceId", "s"),
            DBusProperty("ResultCode", "s"),
            DBusProperty("FramesCaptured", "t"),
            DBusProperty("Title", "s", emitsChangedSignal: .const),
            DBusProperty("Owner", "s", emitsChangedSignal: .const),
        ], signals: [
            DBusSignal("Finished", [DBusArgument("resultCode", "s"), DBusArgument("pieceId", "s"), DBusArgument("info", "a{sv}")]),
        ])
    }
}
