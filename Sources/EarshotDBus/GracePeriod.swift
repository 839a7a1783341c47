import EarshotSync

/// A bounded wait for work a shutting-down service lets finish.
public enum GracePeriod {
    /// Waits for `work` to finish, or for `limit` to pass, whichever comes first; returns
    /// whether `work` finished. `work` is not cancelled at the deadline: it goes on running
    /// unwatched (the process is about to exit).
    public static func wait(_ limit: Duration, for work: @escaping @Sendable () async -> Void) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            // Whichever of the two tasks comes first resumes the continuation; the other finds
            // it taken.
            let pending = Locked<CheckedContinuation<Bool, Never>?>(continuation)
            let take = { @Sendable (finished: Bool) in
                pending.withLock { waiting -> CheckedContinuation<Bool, Never>? in
                    defer { waiting = nil }
                    return waiting
                }?.resume(returning: finished)
            }
            let timer = Task {
                try? await Task.sleep(for: limit)
                take(false)
            }
            Task {
                await work()
                timer.cancel()
                take(true)
            }
        }
    }
}
