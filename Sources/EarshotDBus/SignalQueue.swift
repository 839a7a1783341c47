
/// The buffer between the I/O thread and one subscription's consumer.
///
/// Unlike an `AsyncStream`, a consumer whose wait is cancelled (or times out) only stops
/// waiting: the subscription stays alive and keeps buffering. One consumer at a time.
final class SignalQueue: Sendable {
    private struct State {
        var buffer: [DBusMessage] = []
        var head = 0
        var waiter: (id: UInt64, continuation: CheckedContinuation<Void, Never>)?
        var nextWaiterID: UInt64 = 0
        var finished = false
        var dropped = 0

        var count: Int { buffer.count - head }

        mutating func popFirst() -> DBusMessage? {
            guard head < buffer.count else { return nil }
            let message = buffer[head]
            head += 1
            if head > 64 && head * 2 > buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
            return message
        }

        mutating func takeWaiter() -> CheckedContinuation<Void, Never>? {
            defer { waiter = nil }
            return waiter?.continuation
        }
    }

    private let state = Locked(State())
    /// At most this many undelivered messages are kept; newer ones are dropped.
    let limit: Int?

    init(limit: Int?) {
        self.limit = limit
    }

    /// Adds a message (I/O thread) and wakes a waiting consumer. Messages always pass
    /// through the locked buffer, so the hand-off is visible to ThreadSanitizer.
    func push(_ message: DBusMessage) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.finished else { return nil }
            if let limit, s.count >= limit {
                s.dropped += 1
                return nil
            }
            s.buffer.append(message)
            return s.takeWaiter()
        }
        waiter?.resume()
    }

    /// Ends the queue: buffered messages are still delivered, then nil.
    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.finished = true
            return s.takeWaiter()
        }
        waiter?.resume()
    }

    /// Messages dropped because the buffer was full.
    var droppedCount: Int { state.withLock { $0.dropped } }

    /// The next message; nil once finished and drained, or when the waiting task is
    /// cancelled (the queue itself stays open).
    func next() async -> DBusMessage? {
        while true {
            enum Step { case message(DBusMessage?), wait(UInt64) }
            let step = state.withLock { s -> Step in
                if let message = s.popFirst() { return .message(message) }
                if s.finished || Task.isCancelled { return .message(nil) }
                s.nextWaiterID += 1
                return .wait(s.nextWaiterID)
            }
            guard case .wait(let id) = step else {
                if case .message(let message) = step { return message }
                return nil
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { s -> Bool in
                        if s.count > 0 || s.finished || Task.isCancelled { return true }
                        precondition(s.waiter == nil, "a signal subscription has one consumer at a time")
                        s.waiter = (id, continuation)
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
                    guard s.waiter?.id == id else { return nil }
                    return s.takeWaiter()
                }
                waiter?.resume()
            }
            if Task.isCancelled { return nil }
        }
    }
}
