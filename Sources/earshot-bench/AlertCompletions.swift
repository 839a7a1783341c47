import EarshotClient
import EarshotContract
import EarshotDBus
import Foundation

/// Every alert's first `Completed`, as an observer connection (the HMI's view) sees them:
/// how each alert fared, and when its end arrived.
final class AlertCompletions: Sendable {
    struct Completion: Sendable {
        let resultCode: String
        let reason: String
        let arrivedNanoseconds: UInt64

        /// Queued or presented: anything but a rejection at the door.
        var accepted: Bool { resultCode != "REJECTED" }
    }

    private let seen: Locked<[ObjectPath: Completion]>
    private let subscription: SignalSubscription
    private let reader: Task<Void, Never>

    /// Subscribes `observer` to `Completed` of every alert of `busName`.
    init(observer: DBusConnection, busName: String, interface: String) async throws {
        let subscription = try await observer.subscribe(MatchRule(sender: busName, interface: interface, member: AlertsContract.Alert.completed.name))
        let seen = Locked<[ObjectPath: Completion]>([:])
        reader = Task {
            for await signal in subscription {
                let now = monotonicNanoseconds()
                // Read as EarshotClient reads a completion.
                guard let path = signal.path, let result = AlertResult(completed: signal.body) else { continue }
                seen.withLock { known in
                    if known[path] == nil {
                        known[path] = Completion(resultCode: result.resultCode.rawValue, reason: result.reason?.rawValue ?? "",
                                                 arrivedNanoseconds: now)
                    }
                }
            }
        }
        self.seen = seen
        self.subscription = subscription
    }

    func completion(of path: ObjectPath) -> Completion? { seen.withLock { $0[path] } }

    /// Waits until `path` has completed; nil after `timeout`.
    func wait(for path: ObjectPath, timeout: Duration) async throws -> Completion? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let completion = completion(of: path) { return completion }
            guard ContinuousClock.now < deadline else { return nil }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Waits until every one of `paths` has completed or `timeout` has passed; returns
    /// what is known by then.
    func wait(forAll paths: [ObjectPath], timeout: Duration) async throws -> [ObjectPath: Completion] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let known = seen.withLock { all in paths.reduce(into: [ObjectPath: Completion]()) { $0[$1] = all[$1] } }
            if known.count == paths.count || ContinuousClock.now >= deadline { return known }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func stop() {
        subscription.cancel()
        reader.cancel()
    }
}
