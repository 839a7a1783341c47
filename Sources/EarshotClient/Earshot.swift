import EarshotContract
import EarshotDBus

/// A client of Earshot's services: one bus connection and a typed proxy for each service.
///
///     let earshot = try Earshot.connect()
///     let result = try await earshot.alerts.present(Alert(text: "Fuel low", audio: [.text("Please refuel soon")]))
public final class Earshot: Sendable {
    public let connection: DBusConnection
    public let capture: CaptureProxy
    public let alerts: AlertsProxy
    public let pieces: PiecesProxy
    public let session: SessionProxy
    public let orchestrator: OrchestratorProxy

    /// Uses `connection` (which the caller keeps open and closes).
    public init(connection: DBusConnection) {
        self.connection = connection
        capture = CaptureProxy(connection: connection)
        alerts = AlertsProxy(connection: connection)
        pieces = PiecesProxy(connection: connection)
        session = SessionProxy(connection: connection)
        orchestrator = OrchestratorProxy(connection: connection)
    }

    /// Connects to `bus` (the session bus by default).
    public static func connect(_ bus: BusAddress = .session) throws -> Earshot {
        do {
            return Earshot(connection: try DBusConnection.open(bus))
        } catch {
            throw EarshotError(error)
        }
    }

    public func close() { connection.close() }
}

/// A D-Bus error reply from a service, or a request the contract's rules refuse before it
/// is sent: the error's name and its message, which names the field.
public struct EarshotError: Error, Sendable, Equatable, CustomStringConvertible {
    public let name: String
    public let message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// Any error as an `EarshotError`: replies keep their name; anything else is `Failed`.
    public init(describing error: any Error) { self.init(error) }

    init(_ error: any Error) {
        if let error = error as? EarshotError {
            self = error
        } else if let error = error as? DBusError {
            self.init(name: error.name, message: error.message)
        } else {
            self.init(name: DBusError.prefix + "Failed", message: "\(error)")
        }
    }

    /// The last part of an Earshot error's name (`Rejected`, `InvalidData`, …), or the whole name.
    public var shortName: String {
        name.hasPrefix(EarshotContract.errorPrefix) ? String(name.dropFirst(EarshotContract.errorPrefix.count)) : name
    }

    public var isRejected: Bool { code == .earshot(.rejected) }
    public var isInvalidData: Bool { code == .earshot(.invalidData) }
    public var isInvalidArgs: Bool { code == .invalidArgs }
    /// The service is not on the bus (nothing owns its name).
    public var isServiceMissing: Bool { code == .serviceMissing }

    public var description: String { "\(name): \(message)" }
}

/// Calls to one service's objects, with errors as `EarshotError`.
struct ServiceCalls: Sendable {
    let connection: DBusConnection
    let busName: String
    /// How long a call may take unless it says otherwise.
    var timeout: Duration = DBusConnection.defaultTimeout
    /// Whether a call may have the bus start the service (an activatable name not owned now).
    var startsService = true

    func call(_ path: ObjectPath, _ interface: InterfaceDeclaration, _ method: MethodDeclaration, _ arguments: [DBusValue] = [],
              timeout: Duration? = nil) async throws(EarshotError) -> [DBusValue] {
        ClientReach.note(interface, method.name)
        do {
            return try await connection.call(destination: busName, path: path, interface: interface.name, member: method.name,
                                             arguments, timeout: timeout ?? self.timeout, startingService: startsService)
        } catch {
            throw EarshotError(error)
        }
    }

    /// Calls `method`, which replies with an object (a pass-thru, an alert, a job, an
    /// activation): its path, or `Failed` when the reply has none. `cleanup` runs when the
    /// call fails (to end subscriptions made for the object).
    func object(_ path: ObjectPath, _ interface: InterfaceDeclaration, _ method: MethodDeclaration, _ arguments: [DBusValue],
                cleanup: () -> Void = {}) async throws(EarshotError) -> ObjectPath {
        let reply: [DBusValue]
        do {
            reply = try await call(path, interface, method, arguments)
        } catch {
            cleanup()
            throw error
        }
        guard let object = reply.first?.objectPathValue else {
            cleanup()
            throw EarshotError(name: DBusError.prefix + "Failed", message: "\(method.name) replied \(reply)")
        }
        return object
    }

    /// A property of one of the service's objects.
    func property(_ path: ObjectPath, _ interface: InterfaceDeclaration, _ property: PropertyDeclaration,
                  startingService: Bool? = nil) async throws(EarshotError) -> DBusValue {
        do {
            let reply = try await connection.call(destination: busName, path: path, interface: "org.freedesktop.DBus.Properties",
                                                  member: "Get", [.string(interface.name), .string(property.name)], timeout: timeout,
                                                  startingService: startingService ?? startsService)
            guard let value = reply.first?.variantValue else {
                throw EarshotError(name: DBusError.prefix + "Failed", message: "\(property.name): no value in \(reply)")
            }
            return value
        } catch {
            throw EarshotError(error)
        }
    }

    /// Every property of one of the service's objects on `interface` (one `GetAll`).
    func properties(_ path: ObjectPath, _ interface: InterfaceDeclaration) async throws(EarshotError) -> [String: DBusValue] {
        do {
            let reply = try await connection.call(destination: busName, path: path, interface: "org.freedesktop.DBus.Properties",
                                                  member: "GetAll", [.string(interface.name)], timeout: timeout,
                                                  startingService: startsService)
            guard let values = reply.first?.stringKeyedValue else {
                throw EarshotError(name: DBusError.prefix + "Failed", message: "\(interface.name): no properties in \(reply)")
            }
            return values
        } catch {
            throw EarshotError(error)
        }
    }

    /// Sets a writable property of one of the service's objects.
    func setProperty(_ path: ObjectPath, _ interface: InterfaceDeclaration, _ property: PropertyDeclaration,
                     _ value: DBusValue) async throws(EarshotError) {
        do {
            _ = try await connection.call(destination: busName, path: path, interface: "org.freedesktop.DBus.Properties",
                                          member: "Set", [.string(interface.name), .string(property.name), .variant(value)],
                                          timeout: timeout, startingService: startsService)
        } catch {
            throw EarshotError(error)
        }
    }

    /// Follows a property: `onChange` gets its value now and after every change, read when
    /// the service appears on the bus, then from its `PropertiesChanged` (called in the task
    /// that reads the signals, so a change is seen as soon as the signal is read); nil while
    /// the service is not on the bus. Until the connection closes or `cancel()`.
    /// `startingService`: the first value is read by a call even when the service is not on
    /// the bus, so that the bus starts it if it is activatable (nil when that fails). No
    /// later read starts it: a service that left is not started again by being followed.
    func follow(_ path: ObjectPath, _ interface: InterfaceDeclaration, _ property: PropertyDeclaration, startingService: Bool = false,
                _ onChange: @escaping @Sendable (DBusValue?) -> Void) async throws(EarshotError) -> PropertyFollowing {
        let changes: SignalSubscription
        let owners: AsyncStream<String?>
        do {
            changes = try await connection.subscribe(MatchRule(sender: busName, interface: "org.freedesktop.DBus.Properties",
                                                               member: "PropertiesChanged", path: path))
            owners = try await connection.watchNameOwner(busName)
        } catch {
            throw EarshotError(error)
        }
        let following = Task {
            for await signal in changes {
                guard signal.body.count >= 2, signal.body[0].stringValue == interface.name,
                      let value = signal.body[1].stringKeyedValue?[property] else { continue }
                onChange(value)
            }
        }
        let reading = Task {
            var first = true
            for await owner in owners {
                if owner == nil && !(first && startingService) {
                    onChange(nil)
                } else if let value = try? await self.property(path, interface, property, startingService: first && startingService) {
                    onChange(value)
                } else if owner == nil {
                    onChange(nil)
                }
                first = false
            }
        }
        return PropertyFollowing(subscription: changes, tasks: [following, reading])
    }

    /// Subscribes to `signal` of `interface` from this service (unicast ones with `addMatch` false).
    func subscribe(_ interface: InterfaceDeclaration, _ signal: SignalDeclaration, addMatch: Bool = true) async throws(EarshotError) -> SignalSubscription {
        ClientReach.note(interface, signal.name)
        do {
            return try await connection.subscribe(MatchRule(sender: addMatch ? busName : nil, interface: interface.name,
                                                            member: signal.name), addMatch: addMatch)
        } catch {
            throw EarshotError(error)
        }
    }
}

/// A property being followed (`observe…`/`follow…`); `cancel()` stops it.
public final class PropertyFollowing: Sendable {
    private let subscription: SignalSubscription
    private let tasks: [Task<Void, Never>]

    init(subscription: SignalSubscription, tasks: [Task<Void, Never>]) {
        self.subscription = subscription
        self.tasks = tasks
    }

    public func cancel() {
        subscription.cancel()
        tasks.forEach { $0.cancel() }
    }
}
