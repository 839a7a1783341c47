import EarshotSync

/// A client stream read with a time limit: one task drains the stream as it arrives, and
/// `next(within:)` takes the oldest element not yet taken, or nil when none came in time or
/// the stream ended. (A stream's own `next()` cannot be abandoned: cancelling the task that
/// waits on it ends the stream.)
public final class Arrivals<Element: Sendable>: Sendable {
    private let received = Locked<(elements: [Element], ended: Bool)>(([], false))
    private let draining: Task<Void, Never>

    public init<Elements: AsyncSequence & Sendable>(_ elements: Elements) where Elements.Element == Element, Elements.Failure == Never {
        let received = received
        draining = Task {
            for await element in elements { received.withLock { $0.elements.append(element) } }
            received.withLock { $0.ended = true }
        }
    }

    deinit { draining.cancel() }

    /// The next element, waiting at most `limit` for it.
    public func next(within limit: Duration) async -> Element? {
        let deadline = ContinuousClock.now + limit
        while true {
            let (element, ended) = received.withLock { state -> (Element?, Bool) in
                state.elements.isEmpty ? (nil, state.ended) : (state.elements.removeFirst(), false)
            }
            if let element { return element }
            if ended || ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Everything that arrived and was not taken, without waiting.
    public func drained() -> [Element] {
        received.withLock { state in
            defer { state.elements.removeAll() }
            return state.elements
        }
    }
}
