import EarshotSync

/// A client stream's elements, each dated (CLOCK_MONOTONIC ns) as the client yields it: a
/// task drains the stream, and `next(within:)` takes the oldest not yet taken. How soon the
/// caller looks does not change the date, so a figure is what an application reading the
/// client's stream would see.
final class DatedArrivals<Element: Sendable>: Sendable {
    private let received = Locked<(elements: [(Element, UInt64)], ended: Bool)>(([], false))
    private let draining: Task<Void, Never>

    init(_ stream: AsyncStream<Element>) {
        let received = received
        draining = Task {
            for await element in stream {
                let now = monotonicNanoseconds()
                received.withLock { $0.elements.append((element, now)) }
            }
            received.withLock { $0.ended = true }
        }
    }

    deinit { draining.cancel() }

    /// The next element and when it arrived, waiting at most `limit`; nil when none came in
    /// time or the stream ended.
    func next(within limit: Duration) async -> (element: Element, arrivedNanoseconds: UInt64)? {
        let deadline = ContinuousClock.now + limit
        while true {
            let (next, ended) = received.withLock { state -> ((Element, UInt64)?, Bool) in
                state.elements.isEmpty ? (nil, state.ended) : (state.elements.removeFirst(), false)
            }
            if let next { return next }
            if ended || ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}
