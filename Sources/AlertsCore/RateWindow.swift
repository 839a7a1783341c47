/// Per-owner, per-priority acceptance times in a rolling window (milliseconds).
public struct RateWindow: Sendable {
    public static let windowMs: UInt64 = 60_000

    private var accepted: [String: [AlertPriority: [UInt64]]] = [:]

    public init() {}

    /// Milliseconds until `owner` may present another alert of `priority` at `now`, or nil
    /// when it may now: with N = the priority's limit, the time until the oldest of the
    /// last N acceptances leaves the window.
    public mutating func wait(owner: String, priority: AlertPriority, now: UInt64) -> UInt64? {
        prune(owner: owner, priority: priority, now: now)
        let times = accepted[owner]?[priority] ?? []
        guard times.count >= priority.rateLimit else { return nil }
        let leaving = times[times.count - priority.rateLimit]
        return leaving + Self.windowMs - now
    }

    public mutating func record(owner: String, priority: AlertPriority, now: UInt64) {
        accepted[owner, default: [:]][priority, default: []].append(now)
    }

    public mutating func forget(owner: String) {
        accepted.removeValue(forKey: owner)
    }

    /// Drops acceptances that have left the window: one at `t` counts while `now < t + window`.
    private mutating func prune(owner: String, priority: AlertPriority, now: UInt64) {
        guard var times = accepted[owner]?[priority] else { return }
        times.removeAll { $0 + Self.windowMs <= now }
        accepted[owner]?[priority] = times.isEmpty ? nil : times
        if accepted[owner]?.isEmpty == true { accepted.removeValue(forKey: owner) }
    }
}
