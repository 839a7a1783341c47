import EarshotDBus
import Foundation

/// A private bus with one service running on it and one client connection: what most
/// service tests start from.
public struct ServiceSession: Sendable {
    public let bus: PrivateBus
    public let service: ServiceProcess
    public let client: DBusConnection

    /// Starts a bus (then `prepare`, e.g. to write files the service reads or start its
    /// peers; what it returns is added to the service's environment), the service `executable` owning `busName`, and a client; runs `body`; and
    /// always tears everything down without blocking the cooperative threads other tests
    /// run on (the defers only catch early failures). When `body` fails after the service
    /// has exited, the error carries the end of the service's log.
    public static func with<T>(_ executable: String, arguments: [String] = [], busName: String,
                               environment: [String: String] = [:],
                               prepare: ((PrivateBus) async throws -> [String: String])? = nil,
                               _ body: (ServiceSession) async throws -> T) async throws -> T {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let prepared = try await prepare?(bus) ?? [:]
        let service = try await ServiceProcess(executable, arguments: arguments, bus: bus, busName: busName,
                                               environment: environment.merging(prepared) { _, new in new })
        defer { service.stop() }
        let client = try await bus.connect()
        defer { client.close() }
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await body(ServiceSession(bus: bus, service: service, client: client)))
        } catch {
            if !service.isRunning {
                let status = await service.waitForExit(timeout: .zero).map(String.init) ?? "?"
                outcome = .failure(HarnessError("\(error)\n\(executable) had exited (status \(status)):\n\(service.logText.suffix(3000))"))
            } else {
                outcome = .failure(error)
            }
        }
        client.close()
        await service.shutdown()
        await bus.shutdown()
        return try outcome.get()
    }
}
