import EarshotDBus
import EarshotService
import Logging
import OrchestratorCore

/// The health of the services the orchestrator drives: each well-known name's owner, from
/// `NameOwnerChanged`, as the `Services` property and `ServiceChanged` signals.
final class ServiceWatch: Sendable {
    private let connection: DBusConnection
    private let logger: Logger
    private let owners = Locked<[String: String]>([:])
    private let tasks = BackgroundTasks()

    init(connection: DBusConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Starts following every name; `changed` is called on every change after the first
    /// reading (name, running).
    func start(changed: @escaping @Sendable (ServiceName, Bool) -> Void) async throws {
        for service in ServiceName.allCases {
            let stream = try await connection.watchNameOwner(service.busName)
            tasks.run { [weak self] in
                var first = true
                for await owner in stream {
                    guard let self else { return }
                    self.owners.withLock { $0[service.busName] = owner ?? "" }
                    if first {
                        first = false
                        changed(service, owner != nil)
                        continue
                    }
                    self.logger.info("\(service.busName) \(owner == nil ? "left the bus" : "is on the bus as \(owner!)")")
                    changed(service, owner != nil)
                }
            }
        }
    }

    func stop() {
        tasks.cancelAll()
    }

    func isRunning(_ service: ServiceName) -> Bool {
        !(owners.withLock { $0[service.busName] } ?? "").isEmpty
    }

    /// `Services`: well-known name → (unique owner or "", running).
    var property: DBusValue {
        let snapshot = owners.withLock { $0 }
        return .dictionary(key: .string, value: .structure([.string, .boolean]), ServiceName.allCases.map { service in
            let owner = snapshot[service.busName] ?? ""
            return DBusValue.DictionaryEntry(.string(service.busName), .structure([.string(owner), .boolean(!owner.isEmpty)]))
        })
    }
}
