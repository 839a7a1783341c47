import EarshotSync

/// A service's own background tasks (a finished object lingering before it leaves the bus,
/// a name being followed): each is forgotten when it ends, so a long-running service
/// holds only those still running, and all of them can be cancelled at shutdown or
/// waited for. Every service keeps its unstructured work here rather than in lists of its own.
public final class BackgroundTasks: Sendable {
    private let running = Locked<(next: UInt64, tasks: [UInt64: Task<Void, Never>])>((0, [:]))

    public init() {}

    /// Starts `operation` as an unstructured task.
    public func run(_ operation: @escaping @Sendable () async -> Void) {
        running.withLock { running in
            let key = running.next
            running.next += 1
            running.tasks[key] = Task { [weak self] in
                await operation()
                self?.forget(key)
            }
        }
    }

    /// How many are still running.
    public var count: Int { running.withLock { $0.tasks.count } }

    /// Returns once every task started so far has ended.
    public func waitForAll() async {
        let tasks = running.withLock { Array($0.tasks.values) }
        for task in tasks { await task.value }
    }

    /// Cancels every task still running.
    public func cancelAll() {
        let tasks = running.withLock { running in
            defer { running.tasks.removeAll() }
            return Array(running.tasks.values)
        }
        tasks.forEach { $0.cancel() }
    }

    private func forget(_ key: UInt64) {
        _ = running.withLock { $0.tasks.removeValueShrinking(forKey: key) }
    }
}
