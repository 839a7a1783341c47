import Dispatch

/// Where a service does blocking work (disk, decoding, device I/O), so that neither the
/// bus thread nor Swift's cooperative threads wait on it. Serial or concurrent.
public final class BlockingQueue: Sendable {
    private let queue: DispatchQueue

    public init(label: String, concurrent: Bool) {
        queue = DispatchQueue(label: label, attributes: concurrent ? [.concurrent] : [])
    }

    /// Runs `body` on the queue and returns what it returns or throws.
    public func run<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Swift.Result { try body() }) }
        }
    }
}
