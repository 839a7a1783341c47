import EarshotDBus

/// The one declaration of each interface the alert service serves.
enum AlertsInterfaces {
    static let busName = "org.earshot.Alerts1"
    static let managerPath: ObjectPath = "/org/earshot/Alerts1"
    static let manager = "org.earshot.Alerts1"
    static let alert = "org.earshot.Alerts1.Alert"

    static func managerInterface(_ service: AlertsService) -> DBusInterface {
        DBusInterface(manager, methods: [
            DBusMethod("PresentAlert", in: [DBusArgument("alert", "a{sv}")], out: [DBusArgument("alert", "o")]) { call in
                [.objectPath(try await service.present(call, speechOnly: false))]
            },
            DBusMethod("Speak", in: [DBusArgument("chunks", "a(ss)"), DBusArgument("options", "a{sv}")],
                       out: [DBusArgument("alert", "o")]) { call in
                [.objectPath(try await service.present(call, speechOnly: true))]
            },
        ], properties: [
            DBusProperty("DefaultTimeout", "d", access: .readwrite) { value, _ in try service.setDefaultTimeout(value) },
            DBusProperty("ButtonTimeout", "d", access: .readwrite) { value, _ in try service.setButtonTimeout(value) },
            DBusProperty("DisplayLines", "u", access: .readwrite) { value, _ in try service.setDisplayLines(value) },
            DBusProperty("Current", "o"),
            DBusProperty("QueueLength", "u"),
            DBusProperty("Capabilities", "a{sv}"),
        ])
    }

    static func alertInterface(_ alert: AlertObject) -> DBusInterface {
        DBusInterface(Self.alert, methods: [
            DBusMethod("Cancel") { call in
                try await alert.cancel(call)
                return []
            },
            DBusMethod("PressButton", in: [DBusArgument("id", "q")]) { call in
                try await alert.pressButton(call)
                return []
            },
            DBusMethod("Dismiss") { call in
                try await alert.dismiss(call)
                return []
            },
        ], properties: [
            DBusProperty("State", "s"),
            DBusProperty("Owner", "s", emitsChangedSignal: .const),
            DBusProperty("Lines", "as", emitsChangedSignal: .const),
            DBusProperty("SoftButtons", "aa{sv}", emitsChangedSignal: .const),
            DBusProperty("Priority", "s", emitsChangedSignal: .const),
            DBusProperty("ShowWaitIndicator", "b", emitsChangedSignal: .const),
            DBusProperty("Icon", "s", emitsChangedSignal: .const),
            DBusProperty("ResultCode", "s"),
            DBusProperty("TryAgainTimeMs", "u"),
            // When the presented alert ends unless a press, a cancel or a preemption ends it
            // sooner (CLOCK_MONOTONIC, µs); 0 while not known (its audio not rendered yet).
            DBusProperty("EndsAtMonotonicUs", "t"),
        ], signals: [
            DBusSignal("Completed", [DBusArgument("success", "b"), DBusArgument("resultCode", "s"),
                                     DBusArgument("info", "a{sv}")]),
            DBusSignal("ButtonPressed", [DBusArgument("id", "q")]),
        ])
    }
}
