import EarshotSync
import Synchronization

/// Routing state of a connection: signal subscriptions, the owners of well-known names
/// that subscriptions filter on, and exported objects.
struct Routing {
    struct Subscription {
        let rule: MatchRule
        let queue: SignalQueue
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

/// A live signal subscription: iterate it, or call `next(timeout:)`, for the matching
/// signals. Cancelling a wait does not end the subscription; `cancel()`, or the last
/// reference going away, removes the rule locally and from the bus and ends iteration.
/// An iteration in progress keeps the subscription alive. One consumer at a time.
public final class SignalSubscription: AsyncSequence, Sendable {
    public typealias Element = DBusMessage

    public let rule: MatchRule
    let queue: SignalQueue
    private let cancelAction: @Sendable () -> Void

    init(rule: MatchRule, queue: SignalQueue, cancel: @escaping @Sendable () -> Void) {
        self.rule = rule
        self.queue = queue
        cancelAction = cancel
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let owner: SignalSubscription
        public mutating func next() async -> DBusMessage? { await owner.queue.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(owner: self) }

    /// The next signal, or nil if none arrives within `timeout` (or the subscription ended).
    public func next(timeout: Duration) async -> DBusMessage? {
        await withTaskGroup(of: DBusMessage?.self) { group in
            group.addTask { await self.queue.next() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Signals dropped because the consumer fell behind a `bufferLimit`.
    public var droppedCount: Int { queue.droppedCount }

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
    /// dropped and counted in `droppedCount`) for a consumer that stops reading; nil
    /// keeps all.
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
        let queue = SignalQueue(limit: bufferLimit)
        let id: UInt64? = routing.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextSubscriptionID
            state.nextSubscriptionID += 1
            state.subscriptions[id] = .init(rule: rule, queue: queue)
            return id
        }
        guard let id else {
            queue.finish()
            throw EarshotDBus.DBusError.disconnected("the connection is closed")
        }
        let removed = Atomic<Bool>(false)
        let remove: @Sendable () -> Void = { [weak self] in
            guard !removed.exchange(true, ordering: .acquiringAndReleasing) else { return }
            guard let self else { return }
            let entry = self.routing.withLock { $0.subscriptions.removeValueShrinking(forKey: id) }
            entry?.queue.finish()
            if addMatch { self.sendToBusNoReply("RemoveMatch", [.string(rule.description)]) }
            if tracks, let sender = rule.sender { self.untrackOwner(of: sender, removeMatch: true) }
        }
        return SignalSubscription(rule: rule, queue: queue, cancel: remove)
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
                subscription.queue.push(message)
            }
        }
    }

    func finishRouting() {
        let queues = routing.withLock { state -> [SignalQueue] in
            state.finished = true
            // Exported objects refer back to the connection; dropping them breaks the cycle.
            state.objects.objects.removeAll()
            defer { state.subscriptions.removeAll() }
            return state.subscriptions.values.map(\.queue)
        }
        for queue in queues { queue.finish() }
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
