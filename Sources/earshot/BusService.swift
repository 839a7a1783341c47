import EarshotContract
import EarshotDBus

/// One Earshot service as a client sees it: its well-known name and its manager object.
struct BusService: Sendable, Equatable {
    let name: String
    let path: ObjectPath
    /// A short word for messages and status lines ("capture", "alerts", …).
    let label: String

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
