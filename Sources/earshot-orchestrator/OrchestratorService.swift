import EarshotContract
import EarshotDBus
import EarshotService
import EarshotSync
import FoundationEssentials
import Logging
import OrchestratorCore

/// The orchestrator on the bus: `RecordPiece` jobs, and the health of the services they
/// need.
final class OrchestratorService: Sendable {
    struct Settings: Sendable {
        var linger: Duration
        var systemBus: Bool
    }

    let connection: DBusConnection
    let settings: Settings
    let logger: Logger
    let watch: ServiceWatch
    let disk = BlockingQueue(label: "earshot-orchestrator.disk", concurrent: true)
    let manager = Locked<ExportedObject?>(nil)
    private let jobs = Locked<[UInt64: JobRunner]>([:])
    private let nextID = Locked<UInt64>(1)
    /// Set on shutdown: no job is accepted any more.
    private let stopping = Locked(false)

    init(connection: DBusConnection, settings: Settings, logger: Logger) {
        self.connection = connection
        self.settings = settings
        self.logger = logger
        watch = ServiceWatch(connection: connection, logger: logger)
    }

    func start() async throws {
        let object = try connection.export(OrchestratorInterfaces.managerPath, interfaces: [OrchestratorInterfaces.managerInterface(self)])
        manager.withLock { $0 = object }
        try await watch.start { [weak self] service, running in
            guard let self else { return }
            try? self.manager.withLock { try $0?.set(OrchestratorContract.Manager.services, self.watch.property) }
            try? self.manager.withLock { try $0?.emit(OrchestratorContract.Manager.serviceChanged, [.string(service.busName), .boolean(running)]) }
            if !running {
                for job in self.jobs.withLock({ Array($0.values) }) { job.serviceLost(service) }
            }
        }
    }

    /// Ends every job as a cancel would (`ABORTED`: its pass-thru cancelled, a piece it
    /// stored deleted) and waits a few seconds at most for them to finish, so that their
    /// owners see `Finished` before the service leaves the bus.
    func shutdown() async {
        stopping.withLock { $0 = true }
        watch.stop()
        let running = jobs.withLock { Array($0.values) }
        guard !running.isEmpty else { return }
        logger.info("ending \(running.count) job(s)")
        for job in running { job.abandon() }
        let settled = await GracePeriod.wait(.seconds(5)) {
            for job in running { await job.settled() }
        }
        if !settled { logger.warning("some jobs had not finished at exit") }
    }

    func recordPiece(_ call: MethodCall) async throws -> ObjectPath {
        guard !stopping.withLock({ $0 }) else { throw DBusError.failed("\(OrchestratorContract.Manager.recordPiece.name): the service is stopping") }
        let plan = try RecordPlan.read(call)
        // The piece is the requester's: Drop is told whose it is (AuthorUid).
        let requester = try await call.caller()
        let id = nextID.withLock { id -> UInt64 in
            defer { id += 1 }
            return id
        }
        let runner = try JobRunner(id: id, plan: plan, owner: call.sender, ownerUID: requester.uid, service: self)
        jobs.withLock { $0[id] = runner }
        logger.info("job \(id) for \(call.sender) (\(requester.userName)): record '\(plan.title)', up to \(plan.maxDurationMs) ms at \(plan.samplingRate) Hz",
                    metadata: ["job": "\(id)", "caller": "\(call.sender)"])
        call.afterReply { runner.begin() }
        return runner.path
    }

    /// Called once when a job has finished: its object lingers, then leaves the bus.
    func finished(_ runner: JobRunner) {
        _ = jobs.withLock { $0.removeValueShrinking(forKey: runner.id) }
        let linger = settings.linger
        let connection = self.connection
        Task { await Lingering.leave(after: linger) { connection.unexport(runner.path) } }
    }
}
