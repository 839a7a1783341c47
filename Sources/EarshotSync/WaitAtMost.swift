/// Starts `operation` and waits for it at most `patience`: past that the caller goes on
/// and the operation finishes on its own. Returns whether it finished in time.
@discardableResult
public func waitAtMost(_ patience: Duration, for operation: @escaping @Sendable () async -> Void) async -> Bool {
    let waiter = Locked<CheckedContinuation<Bool, Never>?>(nil)
    return await withCheckedContinuation { continuation in
        waiter.withLock { $0 = continuation }
        let finish: @Sendable (Bool) -> Void = { inTime in
            waiter.withLock { waiting in
                defer { waiting = nil }
                return waiting
            }?.resume(returning: inTime)
        }
        let timer = Task {
            try? await Task.sleep(for: patience)
            finish(false)
        }
        Task {
            await operation()
            timer.cancel()
            finish(true)
        }
    }
}
