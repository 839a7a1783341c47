@testable import EarshotDBus
import EarshotEcho
import Foundation
import EarshotTestHarness
import EarshotTestSupport
import Testing

/// A call awaited from a task waits for its reply on the caller's own thread first
/// (`CallerThreadWait`): one thread wake-up per call, and everything else the connection
/// receives meanwhile still delivered.
@Suite struct CallerThreadWaitTests {
    private static func echo(_ connection: DBusConnection, _ index: Int) async throws -> Bool {
        let reply = try await connection.call(destination: EchoService.busName, path: EchoService.path,
                                              interface: EchoService.interfaceName, member: "Echo",
                                              [.variant(.uint32(UInt32(index)))])
        return reply == [.variant(.uint32(UInt32(index)))]
    }

    @Test func callsOneAfterAnotherAreAnsweredOnTheCallersThreadWithoutWakingTheIOThread() async throws {
        try await EchoFixture.with { echo in
            let client = echo.client
            #expect(try await Self.echo(client, 0))
            let wakeUps = client.ioThreadWakeUps.load(ordering: .relaxed)
            let answered = client.answeredOnCallerThreads.load(ordering: .relaxed)
            for index in 1...200 { #expect(try await Self.echo(client, index)) }
            let woke = client.ioThreadWakeUps.load(ordering: .relaxed) - wakeUps
            let onCaller = client.answeredOnCallerThreads.load(ordering: .relaxed) - answered
            // A reply later than the wait (a loaded machine) is awaited by the task, and if far
            // later, so are the member's next 16 calls, each waking the I/O thread; the others
            // wake it only now and then (22 times in 200 once, on a machine busy with the other
            // suites, every reply taken on its caller's thread). The connection below, whose
            // callers never wait, wakes it at least 200 times.
            #expect(onCaller >= 50, "\(onCaller) of 200 calls answered on the caller's thread")
            #expect(woke <= 2 * (200 - onCaller) + 50, "the I/O thread woke \(woke) times for \(onCaller) calls answered on callers' threads")

            // The same calls on a connection whose callers never wait so: each reply wakes it.
            let tasks = try DBusConnection.open(.address(echo.bus.address), callerWait: .zero)
            defer { tasks.close() }
            #expect(try await Self.echo(tasks, 0))
            let taskWakeUps = tasks.ioThreadWakeUps.load(ordering: .relaxed)
            for index in 1...200 { #expect(try await Self.echo(tasks, index)) }
            #expect(tasks.answeredOnCallerThreads.load(ordering: .relaxed) == 0)
            #expect(tasks.ioThreadWakeUps.load(ordering: .relaxed) - taskWakeUps >= 200)
        }
    }

    @Test func aReplyFarLaterThanTheWaitIsAwaitedByTheTaskAndItsMemberSkipsTheWaitAfterwards() async throws {
        try await EchoFixture.with { echo in
            let client = echo.client
            let answered = client.answeredOnCallerThreads.load(ordering: .relaxed)
            let start = ContinuousClock.now
            _ = try await echo.call("Sleep", [.uint32(100)])
            #expect(ContinuousClock.now - start >= .milliseconds(100))
            #expect(client.answeredOnCallerThreads.load(ordering: .relaxed) == answered)
            #expect(client.callerWaits.withLock { $0.slowMembers.count } == 1)
            // Its next calls go straight to the task, counting down; other members still wait.
            _ = try await echo.call("Sleep", [.uint32(1)])
            #expect(client.callerWaits.withLock { $0.slowMembers.values.first } == CallerThreadWaits.slowCalls - 1)
            for index in 0..<20 { #expect(try await Self.echo(client, index)) }
            #expect(client.answeredOnCallerThreads.load(ordering: .relaxed) > answered)
        }
    }

    @Test func signalsArrivingWhileACallerWaitsAreDispatchedInOrder() async throws {
        try await EchoFixture.with { echo in
            let rule = MatchRule(interface: EchoService.interfaceName, member: "Bytes", path: EchoService.path)
            let subscription = try await echo.client.subscribe(rule, addMatch: false)
            defer { subscription.cancel() }
            for round in 0..<20 {
                // The signals come before the reply, so the thread waiting for it reads them.
                _ = try await echo.call("EmitBytes", [.uint32(25), .uint32(64)])
                for sequence in 0..<25 {
                    let signal = await nextSignal(subscription)
                    #expect(signal?.body.last == .uint64(UInt64(sequence)), "round \(round), signal \(sequence): \(String(describing: signal?.body.last))")
                }
            }
        }
    }

    /// Many tasks calling at once on one connection, with replies around the wait (0-4 ms),
    /// replies longer than one read (up to 24 KiB) and signals arriving between them: every
    /// reply reaches its call promptly. A reply read but left undelivered (a lost wake-up)
    /// would wait for the next traffic, or its timeout.
    @Test func concurrentCallsAndSignalsNeverLeaveAReplyUndelivered() async throws {
        try await EchoFixture.with { echo in
            let rule = MatchRule(interface: EchoService.interfaceName, member: "Bytes", path: EchoService.path)
            let subscription = try await echo.client.subscribe(rule, addMatch: false)
            defer { subscription.cancel() }
            let slowest = try await withThrowingTaskGroup(of: Duration.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        var generator = SystemRandomNumberGenerator()
                        var slowest = Duration.zero
                        for index in 0..<150 {
                            let start = ContinuousClock.now
                            switch (worker + index) % 4 {
                            case 0: #expect(try await Self.echo(echo.client, index))
                            case 1: _ = try await echo.call("Sleep", [.uint32(UInt32.random(in: 0...4, using: &generator))], timeout: .seconds(10))
                            case 2:
                                let data = DBusBytes([UInt8](repeating: UInt8(index & 0xFF), count: Int.random(in: 1...24_576, using: &generator)))
                                #expect(try await echo.call("EchoBytes", [.bytes(data)], timeout: .seconds(10)) == [.bytes(data)])
                            default: _ = try await echo.call("EmitBytes", [.uint32(3), .uint32(UInt32.random(in: 16...8192, using: &generator))], timeout: .seconds(10))
                            }
                            slowest = max(slowest, ContinuousClock.now - start)
                        }
                        return slowest
                    }
                }
                return try await group.reduce(Duration.zero) { max($0, $1) }
            }
            #expect(slowest < .seconds(3), "a call took \(slowest)")
        }
    }

    @Test func cancellingACallWhileItsCallerWaitsStopsIt() async throws {
        try await EchoFixture.with { echo in
            let task = Task { try await echo.call("Sleep", [.uint32(20_000)]) }
            task.cancel()
            let start = ContinuousClock.now
            await #expect(throws: CancellationError.self) { _ = try await task.value }
            #expect(ContinuousClock.now - start < .seconds(5))
        }
    }

    /// A connection whose callers wait on their thread for longer than a call takes, so that
    /// the wait is under way when the call ends. Each such wait holds a thread of the
    /// cooperative pool (two threads on a two-core machine) until the call ends: these tests
    /// run one at a time and keep their calls short.
    @Suite(.serialized) struct LongWaits {
        static let wait: Duration = .seconds(2)

        /// Runs `action` as soon as a caller's thread waits on `connection` (a call was just
        /// made), and returns when it ran. The watch has a thread of its own: a task could
        /// not be relied on to see the wait at all, since the waiting caller holds one of the
        /// pool's threads and the target's other suites may hold the rest until the wait is
        /// over (a task once saw nothing for the whole 2 s). Fails if no wait begins.
        static func whenWaiting(_ connection: DBusConnection,
                                _ action: @escaping @Sendable () -> Void) async throws -> ContinuousClock.Instant {
            let acted: ContinuousClock.Instant? = await withCheckedContinuation { continuation in
                Thread {
                    let start = ContinuousClock.now
                    while connection.callerWaits.withLock({ !$0.waiting }) {
                        guard ContinuousClock.now - start < .seconds(10) else { return continuation.resume(returning: nil) }
                        usleep(1000)
                    }
                    let now = ContinuousClock.now
                    action()
                    continuation.resume(returning: now)
                }.start()
            }
            return try #require(acted, "the caller's thread did not wait")
        }

        /// A `Sleep` call on `connection` that must fail with `Disconnected`; the task gives
        /// when it ended, timed on the caller's thread, which the connection's end must wake
        /// (left to the wait's own end, it would come 2 s after the call).
        static func disconnectedCall(on connection: DBusConnection, sleepingMs: UInt32) -> Task<ContinuousClock.Instant, Never> {
            Task {
                await expectDBusError("org.freedesktop.DBus.Error.Disconnected") {
                    _ = try await connection.call(destination: EchoService.busName, path: EchoService.path,
                                                  interface: EchoService.interfaceName, member: "Sleep", [.uint32(sleepingMs)])
                }
                return ContinuousClock.now
            }
        }

        @Test func aTimeoutShorterThanTheWaitEndsTheCallOnTime() async throws {
            try await EchoFixture.with { echo in
                let connection = try DBusConnection.open(.address(echo.bus.address), callerWait: LongWaits.wait)
                defer { connection.close() }
                let start = ContinuousClock.now
                await expectDBusError("org.freedesktop.DBus.Error.NoReply") {
                    _ = try await connection.call(destination: EchoService.busName, path: EchoService.path,
                                                  interface: EchoService.interfaceName, member: "Sleep", [.uint32(1500)],
                                                  timeout: .milliseconds(100))
                }
                let elapsed = ContinuousClock.now - start
                #expect(elapsed >= .milliseconds(95) && elapsed < .seconds(5), "\(elapsed)")
            }
        }

        @Test func closingWhileACallerWaitsFailsItsCall() async throws {
            try await EchoFixture.with { echo in
                let connection = try DBusConnection.open(.address(echo.bus.address), callerWait: LongWaits.wait)
                // (The service's handler sleeps on after: the fixture's stop waits for it.)
                let pending = LongWaits.disconnectedCall(on: connection, sleepingMs: 4000)
                let start = try await LongWaits.whenWaiting(connection) { connection.close() }
                let ended = await pending.value
                #expect(ended - start < LongWaits.wait / 2, "the call ended \(ended - start) after the close")
                #expect(connection.callerWaits.withLock { $0.ended && !$0.waiting })
            }
        }

        @Test func theBusGoingAwayWhileACallerWaitsFailsItsCall() async throws {
            let bus = try await PrivateBus.start()
            defer { bus.stop() }
            let service = try await ServiceProcess("earshot-echo", bus: bus, busName: EchoService.busName)
            defer { service.stop() }
            let connection = try DBusConnection.open(.address(bus.address), callerWait: LongWaits.wait)
            defer { connection.close() }
            let pending = LongWaits.disconnectedCall(on: connection, sleepingMs: 20_000)
            let start = try await LongWaits.whenWaiting(connection) { bus.kill() }
            let ended = await pending.value
            #expect(ended - start < LongWaits.wait / 2, "the call ended \(ended - start) after the bus went away")
            let reason = await connection.disconnected()
            #expect(reason?.name == "org.freedesktop.DBus.Error.Disconnected")
        }
    }
}
