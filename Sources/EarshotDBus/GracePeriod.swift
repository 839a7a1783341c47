import EarshotSync

/// A bounded wait for work a shutting-down service lets finish.
public enum GracePeriod {
    /// Waits for `work` to finish, or for `limit` to pass, whichever comes first; returns
    /// whether `work` finished. `work` is not cancelled at the deadline: it goes on running
    /// unwatched (the process is about to exit).
    public static func wait(_ limit: Duration, for work: @escaping @Sendable () async -> Void) async -> Bool {
        await waitAtMost(limit, for: work)
    }
}
