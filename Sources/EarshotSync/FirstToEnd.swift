/// The result of whichever of `first` and `second` ends first; the other is cancelled and
/// not waited for. (A task group waits for every child, so a child that never ends, such
/// as an await on a reply that will never come, would hold the caller for ever.) The
/// caller's cancellation ends the wait with `CancellationError` and cancels both.
public func firstToEnd<Value: Sendable>(_ first: @escaping @Sendable () async throws -> Value,
                                        _ second: @escaping @Sendable () async throws -> Value) async throws -> Value {
    let race = Race<Value>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.start(continuation, [first, second])
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The state of one `firstToEnd`: the caller waiting, the racing tasks, and whether it ended.
private final class Race<Value: Sendable>: Sendable {
    private struct State {
        var waiting: CheckedContinuation<Value, any Error>?
        var tasks: [Task<Void, Never>] = []
        var ended: Result<Value, any Error>?
    }

    private let state = Locked(State())

    func start(_ continuation: CheckedContinuation<Value, any Error>, _ bodies: [@Sendable () async throws -> Value]) {
        // Cancelled before it started: ends at once.
        let cancelled = state.withLock { state -> Result<Value, any Error>? in
            if let ended = state.ended { return ended }
            state.waiting = continuation
            return nil
        }
        if let cancelled {
            continuation.resume(with: cancelled)
            return
        }
        let tasks = bodies.map { body in
            Task {
                do { self.finish(.success(try await body())) } catch { self.finish(.failure(error)) }
            }
        }
        // A body may have ended while the others were being started: they are cancelled here.
        let alreadyEnded = state.withLock { state in
            state.tasks = tasks
            return state.ended != nil
        }
        if alreadyEnded { tasks.forEach { $0.cancel() } }
    }

    func finish(_ result: Result<Value, any Error>) {
        let (waiting, tasks) = state.withLock { state -> (CheckedContinuation<Value, any Error>?, [Task<Void, Never>]) in
            guard state.ended == nil else { return (nil, []) }
            state.ended = result
            defer { state.waiting = nil }
            return (state.waiting, state.tasks)
        }
        tasks.forEach { $0.cancel() }
        waiting?.resume(with: result)
    }
}
