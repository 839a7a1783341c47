@testable import EarshotDBus
import EarshotTestSupport
import EarshotEcho
import Testing

@Suite struct CallTests {
    @Test func errorRepliesCarryNameAndMessage() async throws {
        try await EchoFixture.with { echo in
            let error = await expectDBusError("org.example.Error.Custom") {
                _ = try await echo.call("Fail", [.string("org.example.Error.Custom"), .string("it went wrong: ünïcode")])
            }
            #expect(error?.message == "it went wrong: ünïcode")
        }
    }

    @Test func callsTimeOutWithNoReply() async throws {
        try await EchoFixture.with { echo in
            let start = ContinuousClock.now
            await expectDBusError("org.freedesktop.DBus.Error.NoReply") {
                _ = try await echo.call("Sleep", [.uint32(20_000)], timeout: .milliseconds(200))
            }
            // Far sooner than the reply would come (generous for sanitizer builds).
            let elapsed = ContinuousClock.now - start
            #expect(elapsed >= .milliseconds(190) && elapsed < .seconds(10), "\(elapsed)")
            // The connection keeps working, and a late reply is ignored.
            let reply = try await echo.call("Echo", [.variant(.uint32(1))])
            #expect(reply == [.variant(.uint32(1))])
        }
    }

    @Test func finishedCallsLeaveNoPileOfDeadlinesAndWaitingCallsKeepTheirs() async throws {
        try await EchoFixture.with { echo in
            // A call that will time out, waiting while a thousand others come and go.
            let start = ContinuousClock.now
            let waiting = Task { try await echo.call("Sleep", [.uint32(20_000)], timeout: .milliseconds(800)) }
            for index in 0..<1000 {
                let reply = try await echo.call("Echo", [.variant(.uint32(UInt32(index)))])
                #expect(reply == [.variant(.uint32(UInt32(index)))])
            }
            let kept = echo.client.calls.withLock { $0.deadlinesKept }
            #expect(kept <= 2 * 1 + 64 + 1, "\(kept) deadlines kept for one call waiting")
            await expectDBusError("org.freedesktop.DBus.Error.NoReply") { _ = try await waiting.value }
            let elapsed = ContinuousClock.now - start
            #expect(elapsed >= .milliseconds(790) && elapsed < .seconds(10), "\(elapsed)")
        }
    }

    @Test func cancellingTheCallerStopsWaiting() async throws {
        try await EchoFixture.with { echo in
            let task = Task { try await echo.call("Sleep", [.uint32(20_000)]) }
            try await Task.sleep(for: .milliseconds(100))
            let start = ContinuousClock.now
            task.cancel()
            await #expect(throws: CancellationError.self) { _ = try await task.value }
            // Far sooner than the reply would come (generous for sanitizer builds).
            #expect(ContinuousClock.now - start < .seconds(10))
        }
    }

    @Test func aThousandConcurrentCallsFromManyTasks() async throws {
        try await EchoFixture.with { echo in
            let ok = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<1000 {
                    group.addTask {
                        let payload = (0..<(i % 97 + 1)).map { UInt8(truncatingIfNeeded: $0 &+ i) }
                        let reply = try await echo.call("EchoBytes", [.bytes(DBusBytes(payload))])
                        return reply == [.bytes(DBusBytes(payload))]
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(ok == 1000)
        }
    }

    @Test func handlersRunConcurrently() async throws {
        try await EchoFixture.with { echo in
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<100 {
                    group.addTask { _ = try await echo.call("Sleep", [.uint32(300)]) }
                }
                try await group.waitForAll()
            }
            // One after another this would take 30 s (the margin is for sanitizer builds).
            #expect(ContinuousClock.now - start < .seconds(15))
        }
    }

    @Test func manyConnectionsAtOnce() async throws {
        try await EchoFixture.with { echo in
            var connections: [DBusConnection] = []
            for _ in 0..<20 { connections.append(try await echo.bus.connect()) }
            defer { connections.forEach { $0.close() } }
            let replies = try await withThrowingTaskGroup(of: Int.self) { group in
                for (i, connection) in connections.enumerated() {
                    group.addTask {
                        for j in 0..<25 {
                            let reply = try await connection.call(destination: EchoService.busName, path: EchoService.path,
                                                                  interface: EchoService.interfaceName, member: "Echo",
                                                                  [.variant(.uint32(UInt32(i * 100 + j)))])
                            guard reply == [.variant(.uint32(UInt32(i * 100 + j)))] else { return 0 }
                        }
                        return 25
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(replies == 500)
        }
    }
}
