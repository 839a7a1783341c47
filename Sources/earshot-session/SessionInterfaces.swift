import EarshotDBus

/// The one declaration of each interface the session service serves.
enum SessionInterfaces {
    static let busName = "org.earshot.Session1"
    static let managerPath: ObjectPath = "/org/earshot/Session1"
    static let manager = "org.earshot.Session1"
    static let activation = "org.earshot.Session1.Activation"

    /// The manager's properties that mirror `GetState`.
    static let stateProperties: [(String, String)] = [
        ("Category", "s"), ("Mode", "s"), ("Options", "as"), ("Active", "b"), ("SampleRate", "d"),
        ("IOBufferDuration", "d"), ("PreferredInput", "s"), ("DataSourceName", "s"), ("PolarPattern", "s"),
        ("InputOrientation", "s"), ("Channels", "u"), ("Route", "a{sv}"),
    ]

    static func managerInterface(_ service: SessionService) -> DBusInterface {
        DBusInterface(manager, methods: [
            DBusMethod("SetDesiredState", in: [DBusArgument("desired", "a{sv}")]) { call in
                try await service.setDesiredState(call)
                return []
            },
            DBusMethod("GetState", out: [DBusArgument("state", "a{sv}")]) { _ in
                [.vardict(service.currentState())]
            },
            DBusMethod("ListInputs", out: [DBusArgument("inputs", "aa{sv}")]) { _ in
                [await service.listInputs()]
            },
            DBusMethod("Activate", in: [DBusArgument("request", "a{sv}")], out: [DBusArgument("activation", "o")]) { call in
                [.objectPath(try await service.activate(call))]
            },
        ], properties: [
            DBusProperty("KeepEnforced", "b", access: .readwrite) { value, _ in try await service.setKeepEnforced(value) },
            DBusProperty("DesiredState", "a{sv}"),
            DBusProperty("Mixer", "s"),
            DBusProperty("DuckLevel", "d", access: .readwrite) { value, _ in try await service.setDuckLevel(value) },
            DBusProperty("Streams", "aa{sv}"),
        ] + stateProperties.map { DBusProperty($0.0, $0.1) },
        signals: [
            DBusSignal("RouteChanged", [DBusArgument("reason", "s"), DBusArgument("previousRoute", "a{sv}")]),
            DBusSignal("Interruption", [DBusArgument("type", "s"), DBusArgument("options", "a{sv}")]),
            DBusSignal("MediaServicesReset"),
            DBusSignal("Reapplied", [DBusArgument("reason", "s"), DBusArgument("ok", "b"), DBusArgument("error", "s")]),
        ])
    }

    static func activationInterface(_ service: SessionService, id: UInt64) -> DBusInterface {
        DBusInterface(activation, methods: [
            DBusMethod("Deactivate") { call in
                try await service.deactivate(id: id, call: call)
                return []
            },
        ], properties: [
            DBusProperty("Owner", "s", emitsChangedSignal: .const),
            DBusProperty("Category", "s", emitsChangedSignal: .const),
            DBusProperty("Mode", "s", emitsChangedSignal: .const),
            DBusProperty("Options", "as", emitsChangedSignal: .const),
            DBusProperty("State", "s"),
            DBusProperty("Ducked", "b"),
        ])
    }
}
