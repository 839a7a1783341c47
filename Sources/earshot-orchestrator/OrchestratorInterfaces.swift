import EarshotContract
import EarshotDBus

/// The orchestrator's handlers, bound to the contract's declarations.
enum OrchestratorInterfaces {
    typealias Manager = OrchestratorContract.Manager
    typealias Job = OrchestratorContract.Job

    static let managerPath = ObjectPath(declared: OrchestratorContract.managerPath)

    static func managerInterface(_ service: OrchestratorService) -> DBusInterface {
        DBusInterface(Manager.interface, methods: [
            DBusMethod(Manager.recordPiece) { call in
                [.objectPath(try await service.recordPiece(call))]
            },
        ])
    }

    static func jobInterface(_ runner: JobRunner) -> DBusInterface {
        DBusInterface(Job.interface, methods: [
            DBusMethod(Job.cancel) { call in
                try await runner.cancel(call)
                return []
            },
        ])
    }
}
