import EarshotDBus

/// One Earshot service as a client sees it: its well-known name, its manager object and
/// manager interface (the contract gives all three the same versioned name).
struct BusService: Sendable, Equatable {
    let name: String
    let path: ObjectPath
    /// A short word for messages and status lines ("capture", "alerts", …).
    let label: String

    var interface: String { name }

    static let capture = BusService(name: "org.earshot.Capture1", path: "/org/earshot/Capture1", label: "capture")
    static let alerts = BusService(name: "org.earshot.Alerts1", path: "/org/earshot/Alerts1", label: "alerts")
    static let session = BusService(name: "org.earshot.Session1", path: "/org/earshot/Session1", label: "session")
    static let pieces = BusService(name: "org.earshot.Pieces1", path: "/org/earshot/Pieces1", label: "pieces")
    static let orchestrator = BusService(name: "org.earshot.Orchestrator1", path: "/org/earshot/Orchestrator1",
                                          label: "orchestrator")

    /// Every service, in the order `earshot status` lists them.
    static let all: [BusService] = [capture, alerts, session, pieces, orchestrator]
}

/// The interfaces of the per-request objects below the managers.
enum RequestInterface {
    static let passThru = "org.earshot.Capture1.PassThru"
    static let alert = "org.earshot.Alerts1.Alert"
    static let job = "org.earshot.Orchestrator1.Job"
    static let properties = "org.freedesktop.DBus.Properties"
}
