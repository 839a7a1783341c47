import EarshotContract
import EarshotDBus
import Foundation

/// Calls a running service with fuzzed arguments and checks that every call gets a reply.
///
/// It introspects the service's object tree (again every few hundred calls, as requests
/// create objects), then sends, call by call: the contract's valid requests, mutations of
/// them, random values of each method's own signature, values of wrong signatures,
/// `Properties.Set` of every property with values of the right and wrong types, and calls
/// of unknown members. A call passes when a reply or a named error comes back within the
/// timeout; the service must still be running at the end.
public final class BusFuzzer {
    public struct Report: Sendable, CustomStringConvertible {
        public var destination: String
        public var seed: UInt64
        public var calls = 0
        public var successes = 0
        /// Error replies by name.
        public var errors: [String: Int] = [:]
        /// Calls that got no reply in time (or whose reply was not a D-Bus reply at all).
        public var failures: [String] = []
        /// How often the fuzzer's own connection was refused by the bus and reopened.
        public var reconnects = 0
        public var slowest: (seconds: Double, call: String) = (0, "")
        public var seconds = 0.0
        public var objectsSeen = 0
        /// Request objects still exported after `finish()`.
        public var objectsLeft = 0

        public var description: String {
            let topErrors = errors.sorted { $0.value > $1.value }.prefix(8).map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            return """
            \(destination): \(calls) calls in \(String(format: "%.1f", seconds)) s (seed \(seed)): \(successes) replies, \
            \(calls - successes - failures.count) errors [\(topErrors)], \(failures.count) without reply, \
            \(objectsSeen) objects seen (\(objectsLeft) left), \(reconnects) reconnects, slowest \(String(format: "%.0f", slowest.seconds * 1000)) ms \
            (\(slowest.call.prefix(120)))
            """
        }
    }

    let bus: BusAddress
    let destination: String
    let root: ObjectPath
    let timeout: Duration
    var values: FuzzValues
    let material: FuzzMaterial
    var connection: DBusConnection
    public private(set) var report: Report
    var methods: [(path: ObjectPath, interface: String, method: IntrospectedNode.Method)] = []
    var properties: [(path: ObjectPath, interface: String, property: IntrospectedNode.Property)] = []

    /// Connects to `bus`; `root` is the service's manager object.
    public init(bus: BusAddress, destination: String, root: ObjectPath, seed: UInt64, material: FuzzMaterial,
                timeout: Duration = .seconds(5)) async throws {
        self.bus = bus
        self.destination = destination
        self.root = root
        self.timeout = timeout
        self.material = material
        values = FuzzValues(seed: seed, material: material)
        report = Report(destination: destination, seed: seed)
        connection = try await DBusConnection.connect(bus)
    }

    deinit { connection.close() }

    /// Sends each of the contract's valid requests once, then `fuzzedCalls` fuzzed calls
    /// (not counted in the report), and waits `settle`: what a service loads on first use,
    /// and its allocator's working set, are in place before memory is measured.
    public func warmUp(fuzzedCalls: Int = 1000, settle: Duration = .seconds(2)) async throws {
        for call in FuzzCorpus.calls(for: destination, material: material) {
            _ = try? await connection.call(destination: destination, path: call.path, interface: call.interface,
                                           member: call.member, call.arguments, timeout: timeout)
        }
        try await discover()
        let counted = report
        for index in 0..<fuzzedCalls {
            if index > 0 && index % 300 == 0 { try? await discover() }
            await send(nextCall())
        }
        report = counted
        try await Task.sleep(for: settle)
        try await discover()
    }

    /// Makes `count` calls; `isAlive` is asked every 100 calls and at the end.
    public func run(calls count: Int, isAlive: () -> Bool = { true },
                    progress: ((Report) -> Void)? = nil) async throws -> Report {
        let start = monotonicNanoseconds()
        if methods.isEmpty { try await discover() }
        for index in 0..<count {
            if index > 0 && index % 300 == 0 { try? await discover() }
            let call = nextCall()
            await send(call)
            if index % 100 == 99 {
                guard isAlive() else {
                    report.failures.append("the service exited after call \(index + 1): \(call)")
                    break
                }
                progress?(report)
            }
        }
        if !isAlive() { report.failures.append("the service is not running after \(report.calls) calls") }
        report.seconds = Double(monotonicNanoseconds() - start) / 1e9
        return report
    }

    /// Ends what the fuzzing started: calls `Cancel`, `End` or `Deactivate` on every
    /// request object (the fuzzer's connection owns them all), closes the connection (so
    /// the services release anything else it owned), and waits up to `timeout` for the
    /// finished objects to go. Returns the request objects still exported then.
    @discardableResult
    public func finish(timeout: Duration = .seconds(30)) async throws -> [String] {
        try? await discover()
        for (path, interface, method) in methods where path != root && method.inputs.isEmpty
            && [AlertsContract.Alert.cancel, CaptureContract.PassThru.end, SessionContract.Activation.deactivate].map(\.name).contains(method.name) {
            _ = try? await connection.call(destination: destination, path: path, interface: interface,
                                           member: method.name, timeout: self.timeout)
        }
        connection.close()
        let watcher = try await DBusConnection.connect(bus)
        defer { watcher.close() }
        let deadline = ContinuousClock.now + timeout
        var left: [String] = []
        while ContinuousClock.now < deadline {
            left = await walk(on: watcher).filter { $0.path != root && $0.node.children.isEmpty }.map(\.path.rawValue)
            if left.isEmpty { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        report.objectsLeft = left.count
        return left
    }

    // MARK: Discovery

    /// The objects below the manager (at most 200), each with what it says of itself.
    func walk(on connection: DBusConnection) async -> [(path: ObjectPath, node: IntrospectedNode)] {
        var found: [(path: ObjectPath, node: IntrospectedNode)] = []
        var queue = [root]
        while let path = queue.first, found.count < 200 {
            queue.removeFirst()
            guard let reply = try? await connection.call(destination: destination, path: path,
                                                         interface: "org.freedesktop.DBus.Introspectable",
                                                         member: "Introspect", timeout: timeout),
                  let xml = reply.first?.stringValue, let node = try? IntrospectedNode(xml: xml) else { continue }
            found.append((path, node))
            queue += node.children.compactMap { try? ObjectPath(path == .root ? "/" + $0 : path.rawValue + "/" + $0) }
        }
        return found
    }

    /// Walks the object tree below the manager and notes every method and property.
    func discover() async throws {
        let found = await walk(on: connection)
        guard !found.isEmpty else { throw HarnessError("\(destination) answered no Introspect call at \(root)") }
        methods = []
        properties = []
        for (path, node) in found {
            for interface in node.interfaces where !interface.name.hasPrefix("org.freedesktop.DBus.") {
                for method in interface.methods { methods.append((path, interface.name, method)) }
                for property in interface.properties { properties.append((path, interface.name, property)) }
            }
        }
        report.objectsSeen = max(report.objectsSeen, found.count)
    }

    // MARK: Choosing calls

    func nextCall() -> FuzzCall {
        for _ in 0..<16 {
            let call = candidate()
            if descriptorCount(call.arguments) <= 8 { return call }
        }
        return FuzzCall(root, "org.freedesktop.DBus.Peer", "Ping")
    }

    func candidate() -> FuzzCall {
        values.descriptorBudget = 8
        let roll = values.count(0...99)
        // Made afresh when used: a descriptor in it is read to its end by the call.
        let corpus = roll < 40 ? FuzzCorpus.calls(for: destination, material: material) : []
        switch roll {
        case 0..<12 where !corpus.isEmpty:
            return values.pick(corpus)
        case 12..<40 where !corpus.isEmpty:
            let call = values.pick(corpus)
            return FuzzCall(call.path, call.interface, call.member, values.mutate(call.arguments))
        case 40..<66 where !methods.isEmpty:
            let (path, interface, method) = values.pick(methods)
            return FuzzCall(path, interface, method.name, method.inputs.map { values.value($0) })
        case 66..<78 where !methods.isEmpty:
            let (path, interface, method) = values.pick(methods)
            return FuzzCall(path, interface, method.name, values.wrongSignature(than: method.inputs).map { values.value($0) })
        case 78..<90 where !properties.isEmpty:
            let (path, interface, property) = values.pick(properties)
            let type = values.chance(60) ? property.type : values.randomType()
            let name = values.chance(90) ? property.name : values.string()
            return FuzzCall(path, "org.freedesktop.DBus.Properties", "Set",
                            [.string(values.chance(90) ? interface : values.string()), .string(name), .variant(values.value(type))])
        case 90..<95:
            let path = methods.isEmpty ? root : values.pick(methods).path
            if values.chance(50) {
                return FuzzCall(path, "org.freedesktop.DBus.Properties", "GetAll", [.string(values.string())])
            }
            let property = properties.isEmpty ? nil : values.pick(properties)
            return FuzzCall(property?.path ?? path, "org.freedesktop.DBus.Properties", "Get",
                            [.string(property?.interface ?? values.string()), .string(property?.property.name ?? values.string())])
        default:
            let path = values.chance(50) ? root : values.objectPath()
            let member = values.pick(["Frobnicate", PiecesContract.Manager.drop.name, AlertsContract.Manager.presentAlert.name, AlertsContract.Alert.cancel.name,
                                  "Introspect", "Ping", "GetMachineId"])
            let declared = EarshotContract.services.first { $0.busName == destination }?.interfaces.map(\.name) ?? []
            let interface = values.pick([destination, "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer",
                                         "org.example.Nonexistent1"] + declared)
            let arguments = values.chance(50) ? [] : [values.value(values.randomType())]
            return FuzzCall(path, interface, member, arguments)
        }
    }

    func descriptorCount(_ arguments: [DBusValue]) -> Int {
        arguments.reduce(0) { total, value in
            switch value {
            case .unixFD: total + 1
            case .variant(let inner): total + descriptorCount([inner])
            case .array(_, let items): total + descriptorCount(items)
            case .structure(let fields): total + descriptorCount(fields)
            case .dictionary(_, _, let entries): total + descriptorCount(entries.flatMap { [$0.key, $0.value] })
            default: total
            }
        }
    }

    // MARK: Sending

    func send(_ call: FuzzCall) async {
        report.calls += 1
        let message = DBusMessage.methodCall(destination: destination, path: call.path, interface: call.interface,
                                             member: call.member, body: call.arguments)
        let start = monotonicNanoseconds()
        do {
            let reply = try await connection.call(message, timeout: timeout)
            report.successes += 1
            values.harvest(reply.body)
        } catch let error as DBusError {
            switch error.name {
            case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
                 "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
                report.failures.append("\(error.name) for \(call)")
            case "org.freedesktop.DBus.Error.Disconnected":
                // The bus dropped the fuzzer's own connection (a message it refused):
                // count it and go on with a new one.
                report.reconnects += 1
                if let fresh = try? await DBusConnection.connect(bus) {
                    connection.close()
                    connection = fresh
                }
            case let name where name.hasPrefix(EarshotContract.errorPrefix) || name.hasPrefix("org.freedesktop.DBus.Error."):
                report.errors[name, default: 0] += 1
                if error.message.isEmpty { report.failures.append("\(name) without a message for \(call)") }
            default:
                report.errors[error.name, default: 0] += 1
                report.failures.append("an error outside the documented names, \(error.name): \(error.message) for \(call)")
            }
        } catch {
            report.failures.append("\(error) for \(call)")
        }
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        if seconds > report.slowest.seconds { report.slowest = (seconds, call.description) }
    }
}
