import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotService

/// The client's connection and the calls every subcommand makes: checking that a
/// service is on the bus, calling its methods and reading its properties, with replies
/// that name a missing service turned into `ClientFailure.notRunning`.
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

    /// Calls `member` on `service` (its manager object and interface unless given).
    func call(_ service: BusService, _ member: String, _ arguments: [DBusValue] = [], path: ObjectPath? = nil,
              interface: String? = nil, timeout: Duration = DBusConnection.defaultTimeout) async throws(ClientFailure) -> [DBusValue] {
        do {
            return try await connection.call(destination: service.name, path: path ?? service.path,
                                             interface: interface ?? service.interface, member: member, arguments,
                                             timeout: timeout)
        } catch {
            throw ClientFailure.from(error, service: service.name)
        }
    }

    /// One property of an object of `service`.
    func property(_ service: BusService, _ property: PropertyDeclaration, path: ObjectPath? = nil,
                  interface: String? = nil) async throws(ClientFailure) -> DBusValue {
        let name = property.name
        let reply = try await call(service, "Get", [.string(interface ?? service.interface), .string(name)],
                                   path: path, interface: RequestInterface.properties)
        guard let value = reply.first?.variantValue else { throw .failed("\(service.name) answered Get \(name) with \(reply)") }
        return value
    }

    /// Every property of an object of `service`.
    func properties(_ service: BusService, path: ObjectPath? = nil,
                    interface: String? = nil) async throws(ClientFailure) -> [String: DBusValue] {
        let reply = try await call(service, "GetAll", [.string(interface ?? service.interface)],
                                   path: path, interface: RequestInterface.properties)
        guard let values = reply.first?.stringKeyedValue else { throw .failed("\(service.name) answered GetAll with \(reply)") }
        return values
    }

    /// Subscribes to `service`'s signals on `interface` (and `member`, when given).
    func subscribe(_ service: BusService, interface: String, member: String? = nil) async throws(ClientFailure) -> SignalSubscription {
        do {
            return try await connection.subscribe(MatchRule(sender: service.name, interface: interface, member: member))
        } catch {
            throw ClientFailure.from(error)
        }
    }
}
