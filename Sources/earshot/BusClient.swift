import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotService

/// The client's connection and what every subcommand needs of it: checking that a service
/// is on the bus, and EarshotClient's proxies, with errors that name a missing service
/// turned into `ClientFailure.notRunning`.
struct BusClient: Sendable {
    let connection: DBusConnection

    /// Connects to the bus the flags select.
    static func open(_ options: BusOptions) throws(ClientFailure) -> BusClient {
        do {
            return BusClient(connection: try DBusConnection.open(options.bus))
        } catch {
            throw .dbus(error)
        }
    }

    func close() { connection.close() }

    /// The typed proxies, on this connection.
    var earshot: Earshot { Earshot(connection: connection) }

    /// Runs `body` with the typed proxies; their errors become failures, a missing
    /// `service` `notRunning`.
    func with<T>(_ service: BusService, _ body: (Earshot) async throws -> T) async throws(ClientFailure) -> T {
        do {
            return try await body(earshot)
        } catch {
            throw ClientFailure.from(error, service: service.name)
        }
    }

    /// The unique name owning `service`, or nil when it is not on the bus.
    func owner(of service: BusService) async throws(ClientFailure) -> String? {
        do {
            return try await connection.nameOwner(service.name)
        } catch {
            throw ClientFailure.from(error)
        }
    }

    /// Fails with `notRunning` unless `service` is on the bus; one the bus can start
    /// (activatable, as on a head unit's system bus) is started first.
    func require(_ service: BusService) async throws(ClientFailure) {
        guard try await owner(of: service) == nil else { return }
        guard (try? await connection.isActivatable(service.name)) == true else { throw .notRunning(service.name) }
        do {
            try await connection.startService(service.name)
        } catch {
            throw ClientFailure.from(error, service: service.name)
        }
    }
}
