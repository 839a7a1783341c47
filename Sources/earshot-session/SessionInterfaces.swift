import EarshotContract
import EarshotDBus

/// The session service's handlers and setters, bound to the contract's declarations.
enum SessionInterfaces {
    typealias Manager = SessionContract.Manager
    typealias Activation = SessionContract.Activation

    static let managerPath = ObjectPath(declared: SessionContract.managerPath)

    static func managerInterface(_ service: SessionService) -> DBusInterface {
        DBusInterface(Manager.interface, methods: [
            DBusMethod(Manager.setDesiredState) { call in
                try await service.setDesiredState(call)
                return []
            },
            DBusMethod(Manager.getState) { _ in
                [.vardict(service.currentState())]
            },
            DBusMethod(Manager.listInputs) { _ in
                [await service.listInputs()]
            },
            DBusMethod(Manager.activate) { call in
                [.objectPath(try await service.activate(call))]
            },
        ], setters: [
            Manager.keepEnforced.name: { value, _ in try await service.setKeepEnforced(value) },
            Manager.duckLevel.name: { value, _ in try await service.setDuckLevel(value) },
        ])
    }

    static func activationInterface(_ service: SessionService, id: UInt64) -> DBusInterface {
        DBusInterface(Activation.interface, methods: [
            DBusMethod(Activation.deactivate) { call in
                try await service.deactivate(id: id, call: call)
                return []
            },
        ])
    }
}
