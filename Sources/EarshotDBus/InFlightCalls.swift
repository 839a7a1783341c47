import EarshotSync

/// The method calls a connection is serving, so that a graceful shutdown can let them
/// finish and answer before the connection closes, and refuse new ones meanwhile. Every
/// connection keeps one (`DBusConnection.inFlight`); the object server counts each call to a
/// handler or property setter from its dispatch until its reply has been sent.
public final class InFlightCalls: Sendable {
    private struct State {
        var count = 0
        var admitted = 0
        var stopping = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    init() {}

    /// Counts a call about to be served; refused (nil error is admission) once `refuseNew`
    /// or `drain` has been called, with `org.freedesktop.DBus.Error.Failed` saying so.
    func admit(_ member: String?) -> DBusError? {
        let admitted = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.count += 1
            state.admitted &+= 1
            return true
        }
        return admitted ? nil : .failed("\(member ?? "the call"): the service is stopping; nothing was done")
    }

    /// How many admitted calls have not been answered yet.
    public var count: Int { state.withLock { $0.count } }

    /// How many calls have been admitted since the connection opened (wrapping), and how
    /// many of them are unanswered: two samples with the same total, both with nothing
    /// unanswered, mean no call was served in between.
    public var activity: (admitted: Int, unanswered: Int) { state.withLock { ($0.admitted, $0.count) } }

    /// Refuses new calls from now on (`admit` throws).
    public func refuseNew() {
        state.withLock { $0.stopping = true }
    }

    /// Refuses new calls from now on, then waits until every admitted call has been
    /// answered or `limit` has passed; returns whether all were answered.
    public func drain(within limit: Duration) async -> Bool {
        refuseNew()
        return await GracePeriod.wait(limit) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let idle = self.state.withLock { state -> Bool in
                    if state.count == 0 { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if idle { continuation.resume() }
            }
        }
    }

    /// An admitted call has been answered.
    func finished() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count -= 1
            guard state.count == 0 else { return [] }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
