import Glibc

/// Who made a method call.
public struct CallerIdentity: Sendable, Equatable {
    public let uniqueName: String
    public let uid: UInt32
    /// The user name for `uid`, or the number as a string when it has no passwd entry.
    public let userName: String

    public init(uniqueName: String, uid: UInt32, userName: String) {
        self.uniqueName = uniqueName
        self.uid = uid
        self.userName = userName
    }
}

/// Calls to the message bus itself (`org.freedesktop.DBus`).
extension DBusConnection {
    func callBus(_ member: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await call(destination: Self.busName, path: Self.busPath, interface: Self.busName,
                       member: member, arguments)
    }

    func sendToBusNoReply(_ member: String, _ arguments: [DBusValue]) {
        var message = DBusMessage.methodCall(destination: Self.busName, path: Self.busPath,
                                             interface: Self.busName, member: member, body: arguments)
        message.noReplyExpected = true
        _ = try? send(message)
    }

    /// Asks for a well-known name without queueing. Fails with `BusNameTaken` naming the
    /// current owner when another connection has it.
    public func requestName(_ name: String) async throws {
        try DBusNames.validateBusName(name)
        guard !DBusNames.isUniqueName(name) else { throw EarshotDBus.DBusError.invalidArgs("'\(name)' is a unique name and cannot be requested") }
        let doNotQueue: UInt32 = 4
        let reply = try await callBus("RequestName", [.string(name), .uint32(doNotQueue)])
        switch reply.first?.uint32Value {
        case 1, 4: return  // primary owner, or already the owner
        case 3:
            let owner = (try? await nameOwner(name)) ?? nil
            throw BusNameTaken(name: name, owner: owner)
        default:
            throw EarshotDBus.DBusError.failed("unexpected RequestName reply \(reply) for \(name)")
        }
    }

    /// Returns once the bus has everything this connection sent before the call (or after
    /// `timeout`): the bus handles a connection's messages in order, so once it answers a
    /// call made now, it has read what was queued before. `close()` drops anything still
    /// queued; flush first to deliver the last signals and replies.
    public func flush(timeout: Duration = .seconds(2)) async {
        _ = try? await call(destination: Self.busName, path: "/org/freedesktop/DBus", interface: Self.busName,
                            member: "GetId", timeout: timeout)
    }

    /// Gives a well-known name back to the bus.
    public func releaseName(_ name: String) async throws {
        _ = try await callBus("ReleaseName", [.string(name)])
    }

    /// The unique name owning `name`, or nil when nobody does.
    public func nameOwner(_ name: String) async throws -> String? {
        do {
            return try await callBus("GetNameOwner", [.string(name)]).first?.stringValue
        } catch let error as EarshotDBus.DBusError where error.name == EarshotDBus.DBusError.prefix + "NameHasNoOwner" {
            return nil
        }
    }

    /// Watches who owns `name`: the first element is the current owner (nil when none),
    /// then one element per change. Works for well-known names and for unique names
    /// (which only ever go from their owner to nil: the peer left the bus).
    public func watchNameOwner(_ name: String) async throws -> AsyncStream<String?> {
        try DBusNames.validateBusName(name)
        let subscription = try await subscribe(Self.ownerChangedRule(name))
        let current = try await nameOwner(name)
        let (stream, continuation) = AsyncStream<String?>.makeStream()
        continuation.yield(current)
        let forwarder = Task {
            var last = current
            for await signal in subscription {
                guard signal.body.count == 3, let newOwner = signal.body[2].stringValue else { continue }
                let owner: String? = newOwner.isEmpty ? nil : newOwner
                if owner != last {
                    last = owner
                    continuation.yield(owner)
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            forwarder.cancel()
            subscription.cancel()
        }
        return stream
    }

    /// Who `uniqueName` is: its uid (asked of the bus once, then cached) and user name.
    public func callerIdentity(_ uniqueName: String) async throws -> CallerIdentity {
        if let cached = identityCache.withLock({ $0.lookup(uniqueName) }) { return cached }
        let reply = try await callBus("GetConnectionUnixUser", [.string(uniqueName)])
        guard let uid = reply.first?.uint32Value else {
            throw EarshotDBus.DBusError.failed("the bus gave no uid for \(uniqueName)")
        }
        let identity = CallerIdentity(uniqueName: uniqueName, uid: uid, userName: Self.userName(for: uid))
        identityCache.withLock { $0.store(identity) }
        return identity
    }

    /// Whether the bus can start a service for `name` on demand (`ListActivatableNames`).
    public func isActivatable(_ name: String) async throws -> Bool {
        try await callBus("ListActivatableNames", []).first?.arrayValue?.contains { $0.stringValue == name } ?? false
    }

    /// Has the bus start the service for `name` now (`StartServiceByName`), if it is not
    /// running; returns once it owns the name.
    public func startService(_ name: String, timeout: Duration = .seconds(30)) async throws {
        _ = try await call(destination: Self.busName, path: Self.busPath, interface: Self.busName, member: "StartServiceByName",
                           [.string(name), .uint32(0)], timeout: timeout)
    }

    /// The process id behind `uniqueName` (`GetConnectionUnixProcessID`).
    public func processID(of uniqueName: String) async throws -> UInt32 {
        let reply = try await callBus("GetConnectionUnixProcessID", [.string(uniqueName)])
        guard let pid = reply.first?.uint32Value else {
            throw EarshotDBus.DBusError.failed("the bus gave no process id for \(uniqueName)")
        }
        return pid
    }

    /// The user name of `uid`, or the number as a string when it has no passwd entry.
    public static func userName(for uid: UInt32) -> String {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>? = nil
        var buffer = [CChar](repeating: 0, count: 4096)
        let status = getpwuid_r(uid, &entry, &buffer, buffer.count, &result)
        guard status == 0, result != nil, let name = entry.pw_name else { return String(uid) }
        return String(cString: name)
    }
}

/// Caller identities by unique name. Unique names are never reused by a bus, so entries
/// never go stale; the cache is bounded by dropping the oldest half when full.
struct IdentityCache {
    private var entries: [String: (identity: CallerIdentity, order: UInt64)] = [:]
    private var counter: UInt64 = 0
    let capacity = 4096

    func lookup(_ name: String) -> CallerIdentity? { entries[name]?.identity }

    mutating func store(_ identity: CallerIdentity) {
        counter += 1
        entries[identity.uniqueName] = (identity, counter)
        if entries.count > capacity {
            let cutoff = counter - UInt64(capacity / 2)
            entries = entries.filter { $0.value.order > cutoff }
        }
    }
}
