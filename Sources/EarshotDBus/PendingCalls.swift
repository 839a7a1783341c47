import CDBus
import EarshotSync

/// Method calls waiting for their reply, by serial, with their deadlines in a min-heap.
///
/// An entry is inserted under the same lock that wraps `dbus_connection_send`, and replies
/// are matched under that lock too, so a reply can never arrive before its entry exists.
struct PendingCalls {
    struct Entry {
        let slot: CallSlot
        let deadline: UInt64

        /// Hands the outcome to the caller and wakes it, the way it waits (`CallSlot`).
        func finish(_ outcome: Result<DBusMessage, any Error>) { slot.finish(outcome) }
    }

    private(set) var entries: [UInt32: Entry] = [:]
    private var heap: [(deadline: UInt64, serial: UInt32)] = []
    /// Set when the connection ends; later calls fail at once.
    var closed = false

    var earliestDeadline: UInt64? { heap.first?.deadline }
    /// How many deadlines the heap holds, those of finished calls included.
    var deadlinesKept: Int { heap.count }

    /// Inserts an entry; returns true when it became the earliest deadline.
    mutating func insert(_ serial: UInt32, _ entry: Entry) -> Bool {
        entries[serial] = entry
        heap.append((entry.deadline, serial))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
        return child == 0
    }

    /// Removes a call that got its reply or was cancelled. Its deadline stays in the heap
    /// (taking it out of the middle would cost more than leaving it) and is dropped when it
    /// comes up, or when such deadlines far outnumber the calls waiting: then the heap is
    /// rebuilt from those, so a steady stream of calls never grows it.
    mutating func remove(_ serial: UInt32) -> Entry? {
        let entry = entries.removeValueShrinking(forKey: serial)
        if heap.count > 2 * entries.count + 64 { rebuildHeap() }
        return entry
    }

    /// Rebuilds the heap, in its room, from the calls waiting (a sorted array is a valid
    /// heap). Only finished calls' deadlines leave it, so the earliest deadline can only move
    /// later, and no wait under way lasts too long.
    private mutating func rebuildHeap() {
        heap.removeAll(keepingCapacity: true)
        for (serial, entry) in entries { heap.append((entry.deadline, serial)) }
        heap.sort { $0.deadline < $1.deadline }
    }

    /// Removes and returns the entries whose deadline has passed.
    mutating func expire(now: UInt64) -> [Entry] {
        var expired: [Entry] = []
        while let top = heap.first, top.deadline <= now {
            popHeap()
            if let entry = entries[top.serial], entry.deadline == top.deadline {
                entries[top.serial] = nil
                expired.append(entry)
            }
        }
        if entries.isEmpty { heap.removeAll(keepingCapacity: true) }
        return expired
    }

    mutating func removeAll() -> [Entry] {
        defer {
            entries.removeAll()
            heap.removeAll()
        }
        return Array(entries.values)
    }

    private mutating func popHeap() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

extension DBusConnection {
    /// libdbus's customary default for method calls.
    public static let defaultTimeout: Duration = .seconds(25)
    /// `defaultTimeout` in nanoseconds, worked out once rather than for every call.
    private static let defaultTimeoutNanoseconds = defaultTimeout.nanosecondsClamped

    /// Calls a method and waits for its reply. Error replies are thrown as `DBusError`s
    /// with the peer's error name and message; no reply in time throws `NoReply`; a
    /// cancelled task stops waiting with `CancellationError`.
    ///
    /// The caller's own thread first waits for the reply in the kernel, as a blocking
    /// libdbus call does, for at most the connection's `callerWait` (see
    /// `CallerThreadWait`); a reply that takes longer is awaited by the suspended task.
    public func call(_ message: DBusMessage, timeout: Duration = defaultTimeout) async throws -> DBusMessage {
        guard message.kind == .methodCall else { throw EarshotDBus.DBusError.invalidArgs("only method calls have replies") }
        var outgoing = message
        outgoing.noReplyExpected = false
        let encoded = try outgoing.encode()
        defer { dbus_message_unref(encoded) }
        let slot = CallSlot()
        let wait = timeout == Self.defaultTimeout ? Self.defaultTimeoutNanoseconds : timeout.nanosecondsClamped
        if !Task.isCancelled, let waiting = beginCallerThreadWait(for: message) {
            await callWaitingOnThisThread(encoded, outgoing, slot: slot, wait: waiting, timeout: wait)
        } else {
            await callWaitingInTask(encoded, slot: slot, timeout: wait)
        }
        guard let outcome = slot.state.withLock({ $0.outcome }) else {
            throw EarshotDBus.DBusError.failed("internal error: a call was woken without an outcome")
        }
        let reply = try outcome.get()
        if reply.kind == .error, let error = reply.error {
            throw error
        }
        return reply
    }

    /// Sends the call and waits for its outcome as a suspended task.
    private func callWaitingInTask(_ encoded: OpaquePointer, slot: CallSlot, timeout wait: UInt64) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                slot.state.withLock { $0.waker = .task(continuation) }
                let entry = { (deadline: UInt64) in PendingCalls.Entry(slot: slot, deadline: deadline) }
                if Task.isCancelled {
                    entry(0).finish(.failure(CancellationError()))
                    return
                }
                let outcome = send(encoded, slot: slot, entry: entry(monotonicNanoseconds() &+ wait))
                switch outcome {
                case .success(let earliest): if earliest { wake() }
                case .failure(let error): entry(0).finish(.failure(error))
                }
            }
        } onCancel: {
            cancelCall(slot)
        }
    }

    /// Sends the call and waits for its outcome on this thread for a while, then, without
    /// one, as a suspended task.
    private func callWaitingOnThisThread(_ encoded: OpaquePointer, _ message: DBusMessage, slot: CallSlot,
                                         wait: CallerThreadWait, timeout: UInt64) async {
        let sent = monotonicNanoseconds()
        let deadline = sent &+ timeout
        slot.state.withLock { $0.waker = .thread(wait) }
        // The I/O thread is not told of the deadline: it matters only if this thread stops
        // waiting first, and is told then.
        if case .failure(let error) = send(encoded, slot: slot, entry: .init(slot: slot, deadline: deadline)) {
            slot.state.withLock { $0.outcome = .failure(error) }
            endCallerThreadWait(wait)
            return
        }
        takeSocketFromIOThread()
        let answered = waitForOutcome(of: slot, on: wait, until: min(deadline, monotonicNanoseconds() &+ callerWaitNanoseconds))
        stopCallerThreadReading(wait)
        if answered { answeredOnCallerThreads.add(1, ordering: .relaxed) }
        if !answered {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let waiting = slot.state.withLock { state -> Bool in
                        guard state.outcome == nil else { return false }
                        state.waker = .task(continuation)
                        return true
                    }
                    guard waiting else { return continuation.resume() }
                    if calls.withLock({ $0.earliestDeadline == deadline }) { wake() }
                }
            } onCancel: {
                cancelCall(slot)
            }
            noteLateReply(to: message, after: monotonicNanoseconds() - sent)
        }
        releaseCallerThreadWait(wait)
    }

    /// Sends `encoded` and records its entry, under the lock that matches replies, so that
    /// no reply can come before its entry; returns whether its deadline is the earliest.
    private func send(_ encoded: OpaquePointer, slot: CallSlot, entry: PendingCalls.Entry) -> Result<Bool, EarshotDBus.DBusError> {
        calls.withLock { state in
            guard !state.closed else { return .failure(.disconnected("the connection is closed")) }
            do throws(EarshotDBus.DBusError) {
                let serial = try sendEncoded(encoded)
                slot.state.withLock { $0.serial = serial }
                return .success(state.insert(serial, entry))
            } catch {
                return .failure(error)
            }
        }
    }

    private func cancelCall(_ slot: CallSlot) {
        let serial = slot.state.withLock { $0.serial }
        if serial != 0, let entry = calls.withLock({ $0.remove(serial) }) {
            entry.finish(.failure(CancellationError()))
        }
    }

    /// Calls `member` and returns the reply's body. `startingService` false: the bus does
    /// not start the destination's service for it (`NO_AUTO_START`).
    public func call(destination: String, path: ObjectPath, interface: String, member: String,
                     _ arguments: [DBusValue] = [], timeout: Duration = defaultTimeout,
                     startingService: Bool = true) async throws -> [DBusValue] {
        var message = DBusMessage.methodCall(destination: destination, path: path, interface: interface,
                                             member: member, body: arguments)
        message.startsService = startingService
        return try await call(message, timeout: timeout).body
    }

    /// Matches a reply to its call (the thread dispatching). Returns false for replies nobody awaits.
    func completeCall(with reply: DBusMessage) -> Bool {
        guard let entry = calls.withLock({ $0.remove(reply.replySerial) }) else { return false }
        entry.finish(.success(reply))
        return true
    }

    /// Fails the calls whose deadline has passed, with one look at the clock that also gives
    /// how long the I/O loop may then wait (I/O thread): milliseconds until the earliest
    /// deadline left, -1 when none is; nil when calls were failed, so that the loop goes
    /// round before it waits. No call waiting, no look at the clock.
    func expireCallsAndNextTimeout() -> Int32? {
        let (expired, next) = calls.withLock { state -> ([PendingCalls.Entry], (deadline: UInt64, now: UInt64)?) in
            guard var earliest = state.earliestDeadline else { return ([], nil) }
            let now = monotonicNanoseconds()
            var expired: [PendingCalls.Entry] = []
            if earliest <= now {
                expired = state.expire(now: now)
                guard let left = state.earliestDeadline else { return (expired, nil) }
                earliest = left
            }
            return (expired, (earliest, now))
        }
        for entry in expired {
            entry.finish(.failure(EarshotDBus.DBusError.noReply(
                "no reply within the timeout (the peer may be stuck, gone, or the call was lost)")))
        }
        if !expired.isEmpty { return nil }
        guard let next else { return -1 }
        let milliseconds = (next.deadline - next.now + 999_999) / 1_000_000
        return Int32(min(milliseconds, UInt64(Int32.max)))
    }

    func failAllCalls(_ error: EarshotDBus.DBusError) {
        let entries = calls.withLock { state -> [PendingCalls.Entry] in
            state.closed = true
            return state.removeAll()
        }
        for entry in entries { entry.finish(.failure(error)) }
    }
}

/// One call's serial, outcome and waiting caller, shared by the caller and whoever
/// finishes the call under one lock: whether the caller still waits on its thread or its
/// task now does, a finish sees it.
final class CallSlot: Sendable {
    struct State {
        /// 0 until the call is sent.
        var serial: UInt32 = 0
        var outcome: Result<DBusMessage, any Error>?
        var waker: CallWaker?
    }

    /// What a caller waits for its reply with.
    enum CallWaker: Sendable {
        /// A suspended task.
        case task(CheckedContinuation<Void, Never>)
        /// The caller's own thread, waiting in the kernel (`CallerThreadWait`).
        case thread(CallerThreadWait)
    }

    let state = Locked(State())

    /// Records the outcome and wakes the caller. The outcome travels through the lock
    /// rather than the continuation so that ThreadSanitizer sees the hand-off.
    func finish(_ outcome: Result<DBusMessage, any Error>) {
        let waker = state.withLock { state -> CallWaker? in
            state.outcome = outcome
            defer { state.waker = nil }
            return state.waker
        }
        switch waker {
        case .task(let continuation): continuation.resume()
        case .thread(let wait): wait.signal()
        case nil: break
        }
    }
}
