import EarshotContract
import EarshotDBus

/// One Earshot service as a client sees it: its well-known name, its manager object and
/// manager interface (the contract gives all three the same versioned name).
struct BusService: Sendable, Equatable {
    let name: String
    let path: ObjectPath
    /// A short word for messages and status lines ("capture", "alerts", …).
    let label: String

    var interface: String { name }

    init(_ service: ServiceDeclaration, label: String) {
        name = service.busName
        path = ObjectPath(declared: service.managerPath)
        self.label = label
    }

    static let capture = BusService(CaptureContract.service, label: "capture")
    static let alerts = BusService(AlertsContract.service, label: "alerts")
    static let session = BusService(SessionContract.service, label: "session")
    static let pieces = BusService(PiecesContract.service, label: "pieces")
    static let orchestrator = BusService(OrchestratorContract.service, label: "orchestrator")

    /// Every service, in the order `earshot status` lists them.
    static let all: [BusService] = [capture, alerts, session, pieces, orchestrator]
}

/// The interfaces of the per-request objects below the managers.
enum RequestInterface {
    static let passThru = CaptureContract.PassThru.interface.name
    static let alert = AlertsContract.Alert.interface.name
    static let job = OrchestratorContract.Job.interface.name
    static let properties = "org.freedesktop.DBus.Properties"
}
