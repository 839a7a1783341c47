import Synchronization

/// Routing state of a connection: signal subscriptions, the owners of well-known names
/// that subscriptions filter on, and exported objects.
struct Routing {
    struct Subscription {
        let rule: MatchRule
        let continuation: AsyncStream<DBusMessage>.Continuation
    }

    struct TrackedName {
        var owner: String?
        var users = 0
    }

    var subscriptions: [UInt64: Subscription] = [:]
    var nextSubscriptionID: UInt64 = 1
    var trackedNames: [String: TrackedName] = [:]
    var objects = ObjectTable()
    var finished = false
}

/// A live signal subscription: iterate it for the matching signals. `cancel()`, or the
/// last reference going away, removes the rule locally and from the bus. An iteration in
/// progress keeps the subscription alive.
public final class SignalSubscription: AsyncSequence, Sendable {
    public typealias Element = DBusMessage

    public struct AsyncIterator: AsyncIteratorProtocol {
        let owner: SignalSubscription
        var inner: AsyncStream<DBusMessage>.AsyncIterator

        public mutating func next() async -> DBusMessage? { await inner.next() }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> DBusMessage? {
            await inner.next(isolation: actor)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(owner: self, inner: signals.makeAsyncIterator())
    }

    public let rule: MatchRule
    public let signals: AsyncStream<DBusMessage>
    private let cancelAction: @Sendable () -> Void

    init(rule: MatchRule, signals: AsyncStream<DBusMessage>, cancel: @escaping @Sendable () -> Void) {
        self.rule = rule
        self.signals = signals
        cancelAction = cancel
    }

    public func cancel() { cancelAction() }

    deinit { cancelAction() }
}

extension DBusConnection {
    static let busName = "org.freedesktop.DBus"
    static let busPath: ObjectPath = "/org/freedesktop/DBus"

    /// Subscribes to signals matching `rule`.
    ///
    /// With `addMatch` (the default) the rule is also added on the bus so broadcast
    /// signals are routed here; without it only signals that reach this connection anyway
    /// (unicast signals addressed to it, or ones other rules bring in) are delivered.
    /// `bufferLimit` bounds how many undelivered signals are kept (oldest kept, newest
    /// dropped) for a consumer that stops reading; nil keeps all.
    public func subscribe(_ rule: MatchRule, addMatch: Bool = true, bufferLimit: Int? = nil) async throws -> SignalSubscription {
        try rule.validate()
        let tracks = rule.sender.map { !DBusNames.isUniqueName($0) && $0 != Self.busName } ?? false
        if tracks, let sender = rule.sender { try await trackOwner(of: sender) }
        if addMatch {
            do {
                _ = try await callBus("AddMatch", [.string(rule.description)])
            } catch {
                if tracks, let sender = rule.sender { untrackOwner(of: sender, removeMatch: true) }
                throw error
            }
        }
        let (stream, continuation) = AsyncStream<DBusMessage>.makeStream(
            bufferingPolicy: bufferLimit.map { .bufferingOldest($0) } ?? .unbounded)
        let id: UInt64? = routing.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextSubscriptionID
            state.nextSubscriptionID += 1
            state.subscriptions[id] = .init(rule: rule, continuation: continuation)
            return id
        }
        guard let id else {
            continuation.finish()
            throw EarshotDBus.DBusError.disconnected("the connection is closed")
        }
        let removed = Atomic<Bool>(false)
        let remove: @Sendable () -> Void = { [weak self] in
            guard !removed.exchange(true, ordering: .acquiringAndReleasing) else { return }
            guard let self else { return }
            let entry = self.routing.withLock { $0.subscriptions.removeValue(forKey: id) }
            entry?.continuation.finish()
            if addMatch { self.sendToBusNoReply("RemoveMatch", [.string(rule.description)]) }
            if tracks, let sender = rule.sender { self.untrackOwner(of: sender, removeMatch: true) }
        }
        continuation.onTermination = { _ in remove() }
        return SignalSubscription(rule: rule, signals: stream, cancel: remove)
    }

    /// Emits a signal: broadcast, or unicast to `destination` (a unique name).
    public func emitSignal(path: ObjectPath, interface: String, member: String,
                           _ arguments: [DBusValue] = [], destination: String? = nil) throws(EarshotDBus.DBusError) {
        try send(.signal(path: path, interface: interface, member: member, body: arguments, destination: destination))
    }

    /// Routes a received signal to matching subscriptions (I/O thread).
    func routeSignal(_ message: DBusMessage) {
        routing.withLock { state in
            if message.sender == Self.busName, message.interface == Self.busName,
               message.member == "NameOwnerChanged", message.body.count == 3,
               case .string(let name) = message.body[0], case .string(let newOwner) = message.body[2],
               state.trackedNames[name] != nil {
                state.trackedNames[name]?.owner = newOwner.isEmpty ? nil : newOwner
            }
            for subscription in state.subscriptions.values
            where subscription.rule.matches(message, senderOwner: { state.trackedNames[$0]?.owner }) {
                subscription.continuation.yield(message)
            }
        }
    }

    func finishAllSubscriptions() {
        let continuations = routing.withLock { state -> [AsyncStream<DBusMessage>.Continuation] in
            state.finished = true
            defer { state.subscriptions.removeAll() }
            return state.subscriptions.values.map(\.continuation)
        }
        for continuation in continuations { continuation.finish() }
    }

    // MARK: Owners of well-known senders

    private func trackOwner(of name: String) async throws {
        let first = routing.withLock { state -> Bool in
            state.trackedNames[name, default: .init()].users += 1
            return state.trackedNames[name]?.users == 1
        }
        guard first else { return }
        do {
            _ = try await callBus("AddMatch", [.string(Self.ownerChangedRule(name).description)])
            let owner = try await nameOwner(name)
            routing.withLock { state in
                if state.trackedNames[name] != nil { state.trackedNames[name]?.owner = owner }
            }
        } catch {
            untrackOwner(of: name, removeMatch: false)
            throw error
        }
    }

    private func untrackOwner(of name: String, removeMatch: Bool) {
        let last = routing.withLock { state -> Bool in
            guard var entry = state.trackedNames[name] else { return false }
            entry.users -= 1
            state.trackedNames[name] = entry.users > 0 ? entry : nil
            return entry.users <= 0
        }
        if last && removeMatch { sendToBusNoReply("RemoveMatch", [.string(Self.ownerChangedRule(name).description)]) }
    }

    static func ownerChangedRule(_ name: String) -> MatchRule {
        MatchRule(sender: busName, interface: busName, member: "NameOwnerChanged", path: busPath, arguments: [0: name])
    }
}
