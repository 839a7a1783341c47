import EarshotContract
import EarshotDBus

/// The alert service's handlers and setters, bound to the contract's declarations.
enum AlertsInterfaces {
    typealias Manager = AlertsContract.Manager
    typealias Alert = AlertsContract.Alert

    static let managerPath = ObjectPath(declared: AlertsContract.managerPath)

    static func managerInterface(_ service: AlertsService) -> DBusInterface {
        DBusInterface(Manager.interface, methods: [
            DBusMethod(Manager.presentAlert) { call in
                [.objectPath(try await service.present(call, speechOnly: false))]
            },
            DBusMethod(Manager.speak) { call in
                [.objectPath(try await service.present(call, speechOnly: true))]
            },
        ], setters: [
            Manager.defaultTimeout.name: { value, _ in try service.setDefaultTimeout(value) },
            Manager.buttonTimeout.name: { value, _ in try service.setButtonTimeout(value) },
            Manager.displayLines.name: { value, _ in try service.setDisplayLines(value) },
        ])
    }

    static func alertInterface(_ alert: AlertObject) -> DBusInterface {
        DBusInterface(Alert.interface, methods: [
            DBusMethod(Alert.cancel) { call in
                try await alert.cancel(call)
                return []
            },
            DBusMethod(Alert.pressButton) { call in
                try await alert.pressButton(call)
                return []
            },
            DBusMethod(Alert.dismiss) { call in
                try await alert.dismiss(call)
                return []
            },
        ])
    }
}
