import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc
import Testing

/// Every Earshot service on one private bus, as a head unit would run them.
typealias Deployment = ServiceStack

/// The orchestrator's and the piece store's declarations, as the contract spells them.
typealias Orchestrator = OrchestratorContract.Manager
typealias Job = OrchestratorContract.Job
typealias Pieces = PiecesContract.Manager

extension ServiceStack {
    static let orchestrator = OrchestratorContract.busName
    static let path = ObjectPath(declared: OrchestratorContract.managerPath)
    /// The manager's interface (at `path`) and each job's.
    static let manager = Orchestrator.interface.name
    static let job = Job.interface.name

    // MARK: Calls

    func record(_ request: [String: DBusValue], on connection: DBusConnection? = nil) async throws -> ObjectPath {
        let reply = try await (connection ?? client).call(destination: Self.orchestrator, path: Self.path, interface: Self.manager,
                                                          member: Orchestrator.recordPiece.name, [.vardict(request)])
        return try #require(reply.first?.objectPathValue)
    }

    func jobProperty(_ path: ObjectPath, _ property: PropertyDeclaration) async throws -> DBusValue? {
        try await client.call(destination: Self.orchestrator, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
                              [.string(Self.job), .string(property.name)]).first?.variantValue
    }

    func pieces(_ method: MethodDeclaration, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await client.call(destination: PiecesContract.busName, path: ObjectPath(declared: PiecesContract.managerPath),
                              interface: Pieces.interface.name, member: method.name, arguments)
    }

    /// Subscribes to a job's `Finished` and `PropertiesChanged`.
    func watch(on connection: DBusConnection? = nil) async throws -> (finished: SignalSubscription, changes: SignalSubscription) {
        let connection = connection ?? client
        return (try await connection.subscribe(MatchRule(sender: Self.orchestrator, interface: Self.job, member: Job.finished.name)),
                try await connection.subscribe(MatchRule(sender: Self.orchestrator, interface: "org.freedesktop.DBus.Properties",
                                                         member: "PropertiesChanged")))
    }

    /// Waits for `path`'s `Finished`: (resultCode, pieceId, info), read as EarshotClient reads
    /// it (so that these tests also prove the client's reading), with the raw info.
    static func finished(_ subscription: SignalSubscription, _ path: ObjectPath, timeout: Duration = .seconds(30))
        async throws -> (code: String, pieceID: String, info: [String: DBusValue]) {
        let deadline = ContinuousClock.now + timeout
        while let signal = await subscription.next(timeout: deadline - ContinuousClock.now) {
            guard signal.path == path else { continue }
            let result = try #require(JobResult(finished: signal.body), "Finished \(signal.body) is not as declared")
            return (result.resultCode.rawValue, result.pieceId, signal.body[2].stringKeyedValue ?? [:])
        }
        throw HarnessError("no Finished from \(path) within \(timeout)")
    }

    /// Waits until `path`'s `State` becomes `state` (from PropertiesChanged).
    static func state(_ subscription: SignalSubscription, _ path: ObjectPath, becomes state: String,
                      timeout: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now + timeout
        while let signal = await subscription.next(timeout: deadline - ContinuousClock.now) {
            if signal.path == path, signal.body.count > 1, signal.body[1].stringKeyedValue?[Job.state]?.stringValue == state { return }
        }
        throw HarnessError("\(path) did not become \(state) within \(timeout)")
    }
}
