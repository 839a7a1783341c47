
/// The buffer between the I/O thread and one subscription's consumer.
///
/// Unlike an `AsyncStream`, a consumer whose wait is cancelled (or times out) only stops
/// waiting: the subscription stays alive and keeps buffering. One consumer at a time.
final class SignalQueue: Sendable {
    private struct State {
        var buffer: [DBusMessage] = []
        var head = 0
        var waiter: (id: UInt64, continuation: CheckedContinuation<DBusMessage?, Never>)?
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
    }

    private let state = Locked(State())
    /// At most this many undelivered messages are kept; newer ones are dropped.
    let limit: Int?

    init(limit: Int?) {
        self.limit = limit
    }

    /// Adds a message (I/O thread); hands it straight to a waiting consumer if any.
    func push(_ message: DBusMessage) {
        let waiter = state.withLock { s -> CheckedContinuation<DBusMessage?, Never>? in
            guard !s.finished else { return nil }
            if let waiter = s.waiter {
                s.waiter = nil
                return waiter.continuation
            }
            if let limit, s.count >= limit {
                s.dropped += 1
                return nil
            }
            s.buffer.append(message)
            return nil
        }
        waiter?.resume(returning: message)
    }

    /// Ends the queue: buffered messages are still delivered, then nil.
    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<DBusMessage?, Never>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter?.continuation
        }
        waiter?.resume(returning: nil)
    }

    /// Messages dropped because the buffer was full.
    var droppedCount: Int { state.withLock { $0.dropped } }

    /// The next message; nil once finished and drained, or when the waiting task is
    /// cancelled (the queue itself stays open).
    func next() async -> DBusMessage? {
        let id = state.withLock { s -> UInt64 in
            s.nextWaiterID += 1
            return s.nextWaiterID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<DBusMessage?, Never>) in
                enum Immediate { case message(DBusMessage?), wait }
                let immediate = state.withLock { s -> Immediate in
                    if let message = s.popFirst() { return .message(message) }
                    if s.finished || Task.isCancelled { return .message(nil) }
                    precondition(s.waiter == nil, "a signal subscription has one consumer at a time")
                    s.waiter = (id, continuation)
                    return .wait
                }
                if case .message(let message) = immediate { continuation.resume(returning: message) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<DBusMessage?, Never>? in
                guard let waiter = s.waiter, waiter.id == id else { return nil }
                s.waiter = nil
                return waiter.continuation
            }
            waiter?.resume(returning: nil)
        }
    }
}
