import CDBus
import CGlibcExtras
import EarshotSync
import Glibc
import Synchronization

/// A call's reply waited for by the thread that made the call, the default way of `call`.
///
/// An awaited reply that the I/O thread reads has to wake a second thread, the one that
/// then runs the suspended task: two thread wake-ups per call where a blocking C client,
/// whose own thread waits on the socket, has one. So the thread that sends a call first
/// waits for the reply itself, on an epoll set of the connection's callers (the socket and
/// an eventfd, registered once), for at most `callerWait` (2 ms by default), and reads and
/// dispatches whatever arrives meanwhile (the reply, and any signal or call for this
/// connection) exactly as the I/O thread would. While it waits the I/O thread does not watch the socket for
/// input: its epoll interest is changed from here, which needs no wake-up of it, so the
/// reply wakes one thread. A reply that takes longer is handed to the suspended task and
/// the I/O thread watches the socket again, so a thread of the cooperative pool is held
/// for no more than `callerWait` whatever the call. One caller at a time per connection
/// waits this way (others wait as tasks, as do calls made on the I/O thread), and a member
/// whose reply once took far longer (four times the wait: a member that does long work,
/// not a reply a busy machine delayed) is awaited as a task for its next 16 calls.
final class CallerThreadWait: Sendable {
    /// The callers' eventfd, which whoever finishes the call from another thread signals.
    let fd: Int32
    /// The waiting thread.
    let thread: pthread_t
    /// Whether `fd` may have been signalled (so that giving it back costs a read only then).
    private let signalled = Atomic<Bool>(false)

    init(fd: Int32, thread: pthread_t) {
        self.fd = fd
        self.thread = thread
    }

    /// Wakes the waiting thread. The thread itself, finishing its own call while it
    /// dispatches, looks at the outcome without a signal.
    func signal() {
        if pthread_equal(thread, pthread_self()) != 0 { return }
        signalled.store(true, ordering: .releasing)
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(fd, $0.baseAddress, 8) }
    }

    /// Resets the eventfd (non-blocking).
    func drain() {
        var counter: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &counter) { read(fd, $0.baseAddress, 8) }
    }

    /// Resets the eventfd if it was ever signalled, for the next wait to use it.
    func drainIfSignalled() {
        if signalled.load(ordering: .acquiring) { drain() }
    }
}

/// The connection's side of caller-thread waits, under one lock: whether a caller waits,
/// the I/O thread's interest in the socket that follows from it, and the members recently
/// too slow to wait for.
struct CallerThreadWaits {
    /// A caller's thread is waiting on the socket (at most one at a time).
    var waiting = false
    /// The I/O loop has ended: nobody waits on the socket any more.
    var ended = false
    /// libdbus has messages queued to send (the I/O thread then watches for output).
    var wantsOutput = false
    /// The socket's events in the I/O thread's epoll set.
    var appliedEvents: UInt32 = EPOLLIN.rawValue
    /// Members whose reply took far longer than the wait, and how many calls of each are
    /// still to be awaited as tasks.
    var slowMembers: [Int: Int] = [:]

    /// Calls of a member to await as tasks after its reply took far longer than the wait.
    static let slowCalls = 16
    /// How many times the wait a reply takes for its member to count as slow.
    static let slowFactor: UInt64 = 4
    /// The most members remembered as slow; the memory starts again beyond it.
    static let slowMembersKept = 256

    var events: UInt32 { (waiting ? 0 : EPOLLIN.rawValue) | (wantsOutput ? EPOLLOUT.rawValue : 0) }
}

extension DBusConnection {
    /// How long a caller's thread waits for its reply by default before its task does.
    public static let defaultCallerWait: Duration = .milliseconds(2)

    /// Starts a wait by this thread for the reply to `message`, when this call may make one:
    /// not on the I/O thread, no other caller waiting so, the member not recently too slow.
    /// Once the call is sent, `takeSocketFromIOThread` stops the I/O thread watching the
    /// socket for input, until the wait stops.
    func beginCallerThreadWait(for message: DBusMessage) -> CallerThreadWait? {
        guard callerWaitNanoseconds > 0, !isOnIOThread else { return nil }
        let waits = callerWaits.withLock { state -> Bool in
            guard !state.waiting, !state.ended else { return false }
            if !state.slowMembers.isEmpty {
                let key = Self.memberKey(message)
                if let left = state.slowMembers[key] {
                    state.slowMembers[key] = left > 1 ? left - 1 : nil
                    return false
                }
            }
            state.waiting = true
            return true
        }
        return waits ? CallerThreadWait(fd: callerWakeFD, thread: pthread_self()) : nil
    }

    /// After the call is sent (the reply is a round trip away, so the change is in place
    /// first; if not, the I/O thread reads the reply and signals this thread): the I/O
    /// thread no longer watches the socket for input.
    func takeSocketFromIOThread() {
        callerWaits.withLock { applySocketInterestLocked(&$0) }
    }

    /// Ends this thread's reading of the socket: the I/O thread watches it again (and is
    /// woken by epoll if something is already waiting there).
    func stopCallerThreadReading(_ wait: CallerThreadWait) {
        callerWaits.withLock { state in
            state.waiting = false
            applySocketInterestLocked(&state)
        }
    }

    /// After a reply that took `nanoseconds`, longer than the wait: marks the member
    /// `message` calls as slow if it took far longer.
    func noteLateReply(to message: DBusMessage, after nanoseconds: UInt64) {
        guard nanoseconds >= CallerThreadWaits.slowFactor * callerWaitNanoseconds else { return }
        let key = Self.memberKey(message)
        callerWaits.withLock { state in
            if state.slowMembers.count >= CallerThreadWaits.slowMembersKept { state.slowMembers.removeAll() }
            state.slowMembers[key] = CallerThreadWaits.slowCalls
        }
    }

    /// Resets the callers' eventfd if this wait's call had it signalled. (A signal still on
    /// its way wakes the next caller's thread once for nothing: it looks at its call and
    /// waits on.)
    func releaseCallerThreadWait(_ wait: CallerThreadWait) {
        wait.drainIfSignalled()
    }

    func endCallerThreadWait(_ wait: CallerThreadWait) {
        stopCallerThreadReading(wait)
        releaseCallerThreadWait(wait)
    }

    /// Waits on this thread until `slot` has its outcome or `deadline` passes, reading and
    /// dispatching what arrives on the socket meanwhile. Returns whether it has one.
    func waitForOutcome(of slot: CallSlot, on wait: CallerThreadWait, until deadline: UInt64) -> Bool {
        var events = (epoll_event(), epoll_event())
        while true {
            if slot.state.withLock({ $0.outcome != nil }) { return true }
            let now = monotonicNanoseconds()
            guard now < deadline else { return false }
            let milliseconds = Int32(min((deadline - now + 999_999) / 1_000_000, UInt64(Int32.max)))
            let ready = withUnsafeMutableBytes(of: &events) { buffer in
                epoll_wait(callerEpollFD, buffer.baseAddress!.assumingMemoryBound(to: epoll_event.self), 2, milliseconds)
            }
            if ready < 0 {
                if errno == EINTR { continue }
                return false
            }
            var socketReady = false
            for index in 0..<Int(ready) {
                if (index == 0 ? events.0 : events.1).data.u32 == Self.wakeToken { wait.drain() } else { socketReady = true }
            }
            if socketReady { readAndDispatchOnThisThread() }
        }
    }

    /// Reads what the socket holds and dispatches every whole message, on a caller's
    /// thread, as the I/O loop does; libdbus's requests to wake the I/O thread for what this
    /// thread reads are not passed on.
    private func readAndDispatchOnThisThread() {
        let pointer = raw.pointer
        readingThread.store(UInt(pthread_self()), ordering: .releasing)
        _ = dbus_connection_read_write(pointer, 0)
        readOnWhilePartial(pointer)
        var status = dbus_connection_dispatch(pointer)
        while status == DBUS_DISPATCH_DATA_REMAINS { status = dbus_connection_dispatch(pointer) }
        readingThread.store(0, ordering: .releasing)
        // The I/O thread is not told of what libdbus asked for here: out of memory (it tries
        // again), something left to send (a reply libdbus made itself), the connection gone.
        if status != DBUS_DISPATCH_COMPLETE || dbus_connection_has_messages_to_send(pointer) != 0
            || dbus_connection_get_is_connected(pointer) == 0 {
            wake()
        }
    }

    /// Sets the I/O thread's interest in the socket to what `state` asks, if it changed.
    func applySocketInterestLocked(_ state: inout CallerThreadWaits) {
        let events = state.events
        guard events != state.appliedEvents, !state.ended else { return }
        var event = epoll_event()
        event.events = events
        event.data.u32 = Self.socketToken
        if epoll_ctl(epollFD, EPOLL_CTL_MOD, socketFD, &event) == 0 { state.appliedEvents = events }
    }

    /// The I/O thread's epoll tokens.
    static let wakeToken: UInt32 = 0
    static let socketToken: UInt32 = 1

    /// The member a message calls, for remembering slow ones (the path is left out: objects
    /// of one kind answer alike).
    static func memberKey(_ message: DBusMessage) -> Int {
        var hasher = Hasher()
        hasher.combine(message.destination)
        hasher.combine(message.interface)
        hasher.combine(message.member)
        return hasher.finalize()
    }

}
