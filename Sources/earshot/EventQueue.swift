import EarshotDBus

/// The events not yet taken, and the one waiter. A wait that is cancelled returns nil
/// and takes nothing, so waiting with a timeout loses no event.
final class EventQueue: Sendable {
    private struct State {
        var buffer: [ClientEvent] = []
        var waiter: CheckedContinuation<ClientEvent?, Never>?
        var finished = false
    }

    private let state = Locked(State())

    func push(_ event: ClientEvent) {
        let waiter = state.withLock { state -> CheckedContinuation<ClientEvent?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.buffer.append(event)
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// The oldest event, waiting for one; nil once finished (after the buffer is drained)
    /// or when the waiting task is cancelled.
    func next() async -> ClientEvent? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ClientEvent?, Never>) in
                let ready = state.withLock { state -> ClientEvent?? in
                    if !state.buffer.isEmpty { return .some(state.buffer.removeFirst()) }
                    // Cancellation is flagged before its handler runs, and the handler
                    // takes the lock: either it finds this waiter or this sees the flag.
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<ClientEvent?, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<ClientEvent?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }
}
