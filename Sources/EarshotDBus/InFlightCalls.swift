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
        /// Those waiting for the next call (`nextCall(after:)`), by number.
        var callWaiters: [(number: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var nextWaiterNumber = 0
    }

    private let state = Locked(State())

    init() {}

    /// Counts a call about to be served; refused (nil error is admission) once `refuseNew`
    /// or `drain` has been called, with `org.freedesktop.DBus.Error.Failed` saying so.
    func admit(_ member: String?) -> DBusError? {
        let (admitted, callWaiters) = state.withLock { state -> (Bool, [(number: Int, continuation: CheckedContinuation<Void, Never>)]) in
            guard !state.stopping else { return (false, []) }
            state.count += 1
            state.admitted &+= 1
            guard !state.callWaiters.isEmpty else { return (true, []) }
            defer { state.callWaiters.removeAll() }
            return (true, state.callWaiters)
        }
        for waiter in callWaiters { waiter.continuation.resume() }
        return admitted ? nil : .failed("\(member ?? "the call"): the service is stopping; nothing was done")
    }

    /// How many admitted calls have not been answered yet.
    public var count: Int { state.withLock { $0.count } }

    /// How many calls have been admitted since the connection opened, and how many of them
    /// are unanswered.
    public var activity: CallActivity { state.withLock { CallActivity(admitted: $0.admitted, unanswered: $0.count) } }

    /// Returns once a call has been admitted after the first `admitted` (at once if one
    /// already has), or once the task is cancelled. Nothing runs while it waits.
    public func nextCall(after admitted: Int) async {
        let number = state.withLock { state -> Int in
            defer { state.nextWaiterNumber &+= 1 }
            return state.nextWaiterNumber
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // A cancellation before this point has marked the task already (its handler
                // found nothing to resume); one after it finds the continuation here.
                let waiting = state.withLock { state -> Bool in
                    guard state.admitted == admitted, !Task.isCancelled else { return false }
                    state.callWaiters.append((number, continuation))
                    return true
                }
                if !waiting { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.callWaiters.firstIndex(where: { $0.number == number }) else { return nil }
                return state.callWaiters.remove(at: index).continuation
            }
            waiter?.resume()
        }
    }

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

/// A sample of a connection's calls (`InFlightCalls.activity`).
public struct CallActivity: Equatable, Sendable {
    /// Calls admitted since the connection opened (wrapping).
    public var admitted: Int
    /// Admitted calls not answered yet.
    public var unanswered: Int

    public init(admitted: Int, unanswered: Int) {
        self.admitted = admitted
        self.unanswered = unanswered
    }

    /// Whether no call was served between `earlier` and this sample: none admitted in
    /// between, and none unanswered at either.
    public func isQuiet(since earlier: CallActivity) -> Bool {
        admitted == earlier.admitted && unanswered == 0 && earlier.unanswered == 0
    }
}
