import CDBus
import CGlibcExtras
import Dispatch
import EarshotSync
import Glibc
import Logging
import Synchronization

/// A private connection to a message bus, serviced by one dedicated I/O thread.
///
/// The I/O thread waits (epoll) on the connection's socket and a wake-up eventfd, lets
/// libdbus read and write with `dbus_connection_read_write(conn, 0)` (under libdbus's own
/// locks; the binding never touches `DBusWatch` objects, which another thread's failed send
/// could free), and dispatches incoming messages outside any libdbus callback. Senders
/// write from their own thread, and a caller's thread may wait for its reply itself
/// (`CallerThreadWait`), reading and dispatching meanwhile in the I/O thread's place. Nothing calls `_exit`: when the bus goes away every pending call
/// fails with `Disconnected`, subscriptions end, and `disconnected()` returns.
public final class DBusConnection: Sendable {
    let raw: RawConnection
    /// The bus-assigned unique name, e.g. `:1.42`.
    public let uniqueName: String
    public let bus: BusAddress
    let logger: Logger

    private let wakeFD: Int32
    let socketFD: Int32
    /// The I/O thread's epoll set: the wake-up eventfd, and the socket with the events
    /// `callerWaits` asks for.
    let epollFD: Int32
    /// How long a caller's thread waits for its reply before its task does (0: never).
    let callerWaitNanoseconds: UInt64
    let callerWaits = Locked(CallerThreadWaits())
    /// Callers' threads waiting for their reply (`CallerThreadWait`, one at a time) wait on
    /// this epoll set: the socket, and `callerWakeFD`, which whoever else finishes the call
    /// signals.
    let callerEpollFD: Int32
    let callerWakeFD: Int32
    /// The caller's thread reading and dispatching in the I/O thread's place (0 when none).
    let readingThread = Atomic<UInt>(0)
    /// How often the I/O thread's wait has returned, and how many calls a caller's thread
    /// saw answered while it waited (for tests: one wake-up per call is the point).
    let ioThreadWakeUps = Atomic<Int>(0)
    let answeredOnCallerThreads = Atomic<Int>(0)
    private let stopRequested = Atomic<Bool>(false)
    private let loopFinished = DispatchSemaphore(value: 0)
    /// The I/O thread's pthread_t once it runs (0 before).
    private let ioThreadID = Atomic<UInt>(0)

    let calls = Locked(PendingCalls())
    /// Jobs of tasks that prefer this connection as their executor (ConnectionExecutor).
    let jobs = Locked(IOJobs())
    /// The method calls this connection is serving (see `InFlightCalls`).
    public let inFlight = InFlightCalls()
    let routing = Locked(Routing())
    let lifecycle = Locked(Lifecycle())
    let identityCache = Locked(IdentityCache())

    struct Lifecycle {
        var isOpen = true
        var closeReason: EarshotDBus.DBusError?
        var waiters: [CheckedContinuation<EarshotDBus.DBusError?, Never>] = []
        var handlers: [@Sendable (EarshotDBus.DBusError?) -> Void] = []
    }

    // MARK: Opening

    /// Opens a private connection to `bus` and registers with it (`Hello`), doing the
    /// blocking handshake on a thread of its own rather than the caller's. `callerWait` is
    /// how long a caller's thread waits for a reply itself before its task does
    /// (`CallerThreadWait`; zero: tasks always wait).
    public static func connect(_ bus: BusAddress, logger: Logger = Logger(label: "earshot.dbus"),
                               callerWait: Duration = defaultCallerWait) async throws -> DBusConnection {
        // The result crosses threads under a lock (visible to ThreadSanitizer); the
        // continuation only wakes the caller.
        let handoff = Locked<Result<DBusConnection, EarshotDBus.DBusError>?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let started = Threads.detached(name: "earshot-connect") {
                let result = Result { () throws(EarshotDBus.DBusError) in try open(bus, logger: logger, callerWait: callerWait) }
                handoff.withLock { $0 = result }
                continuation.resume()
            }
            if case .failure(let error) = started {
                handoff.withLock { $0 = .failure(.noMemory("cannot start a thread to connect: \(String(cString: strerror(error.code)))")) }
                continuation.resume()
            }
        }
        guard let result = handoff.withLock({ $0 }) else { throw EarshotDBus.DBusError.failed("internal error: connect finished without a result") }
        return try result.get()
    }

    /// Opens a private connection to `bus` and registers with it (`Hello`).
    ///
    /// This blocks the calling thread for the connection handshake; from async code
    /// prefer `connect`.
    public static func open(_ bus: BusAddress, logger: Logger = Logger(label: "earshot.dbus"),
                            callerWait: Duration = defaultCallerWait) throws(EarshotDBus.DBusError) -> DBusConnection {
        LibDBus.initThreads()
        let address = try bus.resolve()
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }

        guard let pointer = address.withCString({ dbus_connection_open_private($0, &error) }) else {
            throw Self.take(&error, fallback: "cannot open \(bus)")
        }
        dbus_connection_set_exit_on_disconnect(pointer, 0)
        // libdbus stops reading from the socket while the received messages still alive
        // exceed this size (63 MiB by default). The I/O thread dispatches every message at
        // once, but a received byte block (`DBusBytes`) keeps its message alive for as long
        // as the program holds it; with the limit, holding more than 63 MiB of them would
        // stop the connection, and the I/O loop would find the socket readable yet nothing
        // read, again and again. What a program holds is its own business, as a copy would be.
        dbus_connection_set_max_received_size(pointer, Int.max)
        guard dbus_bus_register(pointer, &error) != 0, let unique = dbus_bus_get_unique_name(pointer) else {
            let failure = Self.take(&error, fallback: "cannot register with \(bus)")
            dbus_connection_close(pointer)
            dbus_connection_unref(pointer)
            throw failure
        }
        var fd: Int32 = -1
        guard dbus_connection_get_unix_fd(pointer, &fd) != 0, fd >= 0 else {
            dbus_connection_close(pointer)
            dbus_connection_unref(pointer)
            throw .failed("connection to \(bus) has no socket")
        }
        // The I/O thread's epoll set and the callers' (each the socket and an eventfd).
        let wakes = [eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)), eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))]
        let pollers = [epoll_create1(Int32(EPOLL_CLOEXEC)), epoll_create1(Int32(EPOLL_CLOEXEC))]
        var watched = !(wakes + pollers).contains { $0 < 0 }
        for (poller, wake) in zip(pollers, wakes) {
            for (watchedFD, token) in [(wake, wakeToken), (fd, socketToken)] where watched {
                var event = epoll_event()
                event.events = EPOLLIN.rawValue
                event.data.u32 = token
                watched = epoll_ctl(poller, EPOLL_CTL_ADD, watchedFD, &event) == 0
            }
        }
        guard watched else {
            let reason = String(cString: strerror(errno))
            for opened in wakes + pollers where opened >= 0 { Glibc.close(opened) }
            dbus_connection_close(pointer)
            dbus_connection_unref(pointer)
            throw .failed("cannot watch the connection (eventfd, epoll): \(reason)")
        }
        let connection = DBusConnection(raw: RawConnection(pointer: pointer), uniqueName: String(cString: unique),
                                        bus: bus, wakeFD: wakes[0], socketFD: fd, epollFD: pollers[0],
                                        callerWakeFD: wakes[1], callerEpollFD: pollers[1],
                                        callerWait: callerWait, logger: logger)
        connection.start()
        return connection
    }

    private init(raw: RawConnection, uniqueName: String, bus: BusAddress, wakeFD: Int32, socketFD: Int32,
                 epollFD: Int32, callerWakeFD: Int32, callerEpollFD: Int32, callerWait: Duration, logger: Logger) {
        self.raw = raw
        self.uniqueName = uniqueName
        self.bus = bus
        self.wakeFD = wakeFD
        self.socketFD = socketFD
        self.epollFD = epollFD
        self.callerWakeFD = callerWakeFD
        self.callerEpollFD = callerEpollFD
        self.callerWaitNanoseconds = callerWait > .zero ? callerWait.nanosecondsClamped : 0
        self.logger = logger
    }

    static func take(_ error: inout CDBus.DBusError, fallback: String) -> EarshotDBus.DBusError {
        if dbus_error_is_set(&error) != 0, let name = error.name {
            return EarshotDBus.DBusError(name: String(cString: name),
                                         message: error.message.map { String(cString: $0) } ?? fallback)
        }
        return .failed(fallback)
    }

    private func start() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        let pointer = raw.pointer
        dbus_connection_add_filter(pointer, { _, message, data in
            guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            let connection = Unmanaged<DBusConnection>.fromOpaque(data).takeUnretainedValue()
            return connection.handleIncoming(message)
        }, context, nil)
        dbus_connection_set_wakeup_main_function(pointer, { data in
            guard let data else { return }
            Unmanaged<DBusConnection>.fromOpaque(data).takeUnretainedValue().wakeForLibDBus()
        }, context, nil)
        dbus_connection_set_dispatch_status_function(pointer, { _, _, data in
            // Dispatching here is forbidden (libdbus holds locks); just wake the I/O thread.
            guard let data else { return }
            Unmanaged<DBusConnection>.fromOpaque(data).takeUnretainedValue().wakeForLibDBus()
        }, context, nil)
        // The thread keeps the connection alive until its loop ends; the libdbus
        // connection is closed there, and released in deinit once nobody can use it.
        let started = Threads.detached(name: "earshot-dbus-io") { [self] in
            ioThreadID.store(pthread_self(), ordering: .releasing)
            runLoop()
            connectionLost(stopRequested.load(ordering: .acquiring)
                           ? nil : .disconnected("the connection to the \(bus) was lost"))
            // After the calls have failed: the tasks they resumed here run elsewhere.
            stopRunningJobs()
            endCallerThreadWaits()
            dbus_connection_close(raw.pointer)
            loopFinished.signal()
        }
        if case .failure(let error) = started {
            // Without its thread the connection cannot be serviced: it is lost at once.
            connectionLost(.noMemory("cannot start the D-Bus I/O thread: \(String(cString: strerror(error.code)))"))
            stopRunningJobs()
            dbus_connection_close(raw.pointer)
            loopFinished.signal()
        }
    }

    deinit {
        dbus_connection_unref(raw.pointer)
        Glibc.close(wakeFD)
        Glibc.close(epollFD)
        Glibc.close(callerWakeFD)
        Glibc.close(callerEpollFD)
    }

    /// After the I/O loop: no caller's thread waits on the socket, which is about to close
    /// (the calls have failed, so a thread waiting now is about to stop), and none will.
    private func endCallerThreadWaits() {
        while !callerWaits.withLock({ state in
            if !state.waiting { state.ended = true }
            return state.ended
        }) {
            usleep(100)
        }
    }

    // MARK: The I/O loop

    /// Makes the I/O thread leave `poll` and look again. Not needed on the I/O thread
    /// itself, which dispatches and sends queued data before it polls: libdbus asks for a
    /// wake-up for every message it reads, and each would cost a write, a poll and a read.
    func wake() {
        if isOnIOThread { return }
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(wakeFD, $0.baseAddress, 8) }
    }

    /// `wake()` for libdbus's callbacks, which also come for what a caller's thread reads
    /// in the I/O thread's place (`CallerThreadWait`): that thread dispatches it itself.
    private func wakeForLibDBus() {
        if readingThread.load(ordering: .acquiring) == UInt(pthread_self()) { return }
        wake()
    }

    var isOnIOThread: Bool {
        ioThreadID.load(ordering: .acquiring) == pthread_self()
    }

    private func runLoop() {
        let pointer = raw.pointer
        var events = [epoll_event](repeating: epoll_event(), count: 2)
        var spareJobs: [UnownedJob] = []
        var wantsOutput = false
        while !stopRequested.load(ordering: .acquiring) {
            while dbus_connection_dispatch(pointer) == DBUS_DISPATCH_DATA_REMAINS {}
            // Tasks resumed by that dispatch, when they run here: look again before polling,
            // for what they sent and what arrived meanwhile.
            if runQueuedJobs(swapping: &spareJobs) { continue }
            let connected = dbus_connection_get_is_connected(pointer) != 0
            if !connected { break }
            let output = dbus_connection_has_messages_to_send(pointer) != 0
            if output != wantsOutput {
                wantsOutput = output
                callerWaits.withLock { state in
                    state.wantsOutput = output
                    applySocketInterestLocked(&state)
                }
            }
            // Calls that ran out of time fail before the wait; the tasks they resume may run
            // here, so the loop goes round first.
            guard let timeout = expireCallsAndNextTimeout() else { continue }
            let result = epoll_wait(epollFD, &events, Int32(events.count), timeout)
            ioThreadWakeUps.add(1, ordering: .relaxed)
            if result < 0 && errno != EINTR {
                logger.error("epoll_wait failed: \(String(cString: strerror(errno)))")
                break
            }
            var socketReady = false
            for event in events.prefix(max(0, Int(result))) {
                if event.data.u32 == Self.wakeToken {
                    var counter: UInt64 = 0
                    _ = withUnsafeMutableBytes(of: &counter) { read(wakeFD, $0.baseAddress, 8) }
                } else {
                    socketReady = true
                }
            }
            if socketReady {
                _ = dbus_connection_read_write(pointer, 0)
                readOnWhilePartial(pointer)
            }
        }
    }

    /// libdbus reads at most 4 KiB per `read_write` (two reads of 2 KiB), so a long message
    /// takes many: a 1 MiB reply is 256. While no whole message is waiting and the socket
    /// holds more bytes, this reads on at once, up to `readsPerPass` times, rather than going
    /// round the loop (its own poll, the dispatch, the job queue) for every 4 KiB. It asks
    /// the socket how much is waiting once per batch, not before every read: as many reads
    /// as that needs, then it asks again.
    func readOnWhilePartial(_ pointer: OpaquePointer) {
        guard dbus_connection_get_dispatch_status(pointer) == DBUS_DISPATCH_COMPLETE else { return }
        var reads = 0
        var unread: Int32 = 0
        // Each read below is followed by a look at the dispatch status, so at the top of this
        // loop no whole message is waiting yet.
        while reads < Self.readsPerPass {
            guard ioctl(socketFD, UInt(FIONREAD), &unread) == 0, unread > 0 else { return }
            let batch = min(Self.readsPerPass - reads, (Int(unread) + Self.bytesPerRead - 1) / Self.bytesPerRead)
            for _ in 0 ..< batch {
                _ = dbus_connection_read_write(pointer, 0)
                reads += 1
                if dbus_connection_get_dispatch_status(pointer) != DBUS_DISPATCH_COMPLETE { return }
            }
        }
    }

    /// The reads `readOnWhilePartial` makes before the loop looks at everything else again.
    private static let readsPerPass = 64

    /// What libdbus reads from the socket at most per `read_write`.
    private static let bytesPerRead = 4096

    // MARK: Closing

    /// Closes the connection: pending calls fail with `Disconnected`, subscriptions end,
    /// and `disconnected()` returns nil. Safe to call more than once and from any thread;
    /// off the I/O thread it returns once the connection is closed.
    public func close() {
        stopRequested.store(true, ordering: .releasing)
        wake()
        if !isOnIOThread {
            loopFinished.wait()
            loopFinished.signal()  // later close() calls return at once
        }
    }

    /// Whether the connection is still usable.
    public var isOpen: Bool { lifecycle.withLock { $0.isOpen } }

    /// Waits until the connection ends; returns why (nil after `close()`).
    public func disconnected() async -> EarshotDBus.DBusError? {
        await withCheckedContinuation { continuation in
            let done = lifecycle.withLock { state -> EarshotDBus.DBusError?? in
                if state.isOpen {
                    state.waiters.append(continuation)
                    return nil
                }
                return .some(state.closeReason)
            }
            if let reason = done { continuation.resume(returning: reason) }
        }
    }

    /// Registers a handler called once when the connection ends (at once if it has):
    /// with the reason, or nil after `close()`.
    public func onDisconnect(_ handler: @escaping @Sendable (EarshotDBus.DBusError?) -> Void) {
        let reason = lifecycle.withLock { state -> EarshotDBus.DBusError?? in
            if state.isOpen {
                state.handlers.append(handler)
                return nil
            }
            return .some(state.closeReason)
        }
        if let reason { handler(reason) }
    }

    /// Marks the connection dead (reason nil: closed on purpose) and tells everyone.
    private func connectionLost(_ reason: EarshotDBus.DBusError?) {
        let taken = lifecycle.withLock { state -> ([CheckedContinuation<EarshotDBus.DBusError?, Never>], [@Sendable (EarshotDBus.DBusError?) -> Void])? in
            guard state.isOpen else { return nil }
            state.isOpen = false
            state.closeReason = reason
            defer {
                state.waiters.removeAll()
                state.handlers.removeAll()
            }
            return (state.waiters, state.handlers)
        }
        guard let (waiters, handlers) = taken else { return }
        if let reason { logger.warning("D-Bus connection lost: \(reason.message)") }
        let failure = reason ?? .disconnected("the connection was closed")
        failAllCalls(failure)
        finishRouting()
        for waiter in waiters { waiter.resume(returning: reason) }
        for handler in handlers { handler(reason) }
    }

    // MARK: Incoming messages (I/O thread)

    private func handleIncoming(_ rawMessage: OpaquePointer) -> DBusHandlerResult {
        let message: DBusMessage
        do {
            message = try DBusMessage(decoding: rawMessage)
        } catch {
            logger.warning("dropping a message that could not be decoded: \(error)")
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
        switch message.kind {
        case .methodReturn, .error:
            return completeCall(with: message) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        case .signal:
            if message.interface == "org.freedesktop.DBus.Local", message.member == "Disconnected" {
                connectionLost(.disconnected("the \(bus) closed the connection"))
                return DBUS_HANDLER_RESULT_HANDLED
            }
            routeSignal(message)
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        case .methodCall:
            dispatchMethodCall(message)
            return DBUS_HANDLER_RESULT_HANDLED
        }
    }

    // MARK: Sending

    /// Sends a message without waiting for a reply; returns its serial.
    @discardableResult
    public func send(_ message: DBusMessage) throws(EarshotDBus.DBusError) -> UInt32 {
        let encoded = try message.encode()
        defer { dbus_message_unref(encoded) }
        return try sendEncoded(encoded)
    }

    func sendEncoded(_ encoded: OpaquePointer) throws(EarshotDBus.DBusError) -> UInt32 {
        guard isOpen else { throw .disconnected("the connection is closed") }
        if dbus_message_contains_unix_fds(encoded) != 0,
           dbus_connection_can_send_type(raw.pointer, EARSHOT_DBUS_TYPE_UNIX_FD) == 0 {
            throw .standard("NotSupported", "this connection cannot pass file descriptors")
        }
        var serial: UInt32 = 0
        guard dbus_connection_send(raw.pointer, encoded, &serial) != 0 else {
            throw .noMemory("out of memory queueing a message")
        }
        return serial
    }
}
