import Dispatch

/// Where a service does blocking work (disk, decoding, device I/O), so that neither the
/// bus thread nor Swift's cooperative threads wait on it. Serial (one job after another,
/// in order) or concurrent.
public final class BlockingQueue: Sendable {
    private let queue: DispatchQueue

    public init(label: String, concurrent: Bool) {
        queue = DispatchQueue(label: label, attributes: concurrent ? [.concurrent] : [])
    }

    /// Runs `body` on the queue and returns what it returns or throws (a body that cannot
    /// throw makes a call that cannot either).
    public func run<Value: Sendable, Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> Value) async throws(Failure) -> Value {
        let outcome: Result<Value, Failure> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(Failure) -> Value in try body() }) }
        }
        return try outcome.get()
    }

    /// Queues `body` without waiting for it: jobs queued from one thread run in the order
    /// they were queued.
    public func enqueue(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }
}
