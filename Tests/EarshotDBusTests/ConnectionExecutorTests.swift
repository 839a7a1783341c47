@testable import EarshotDBus
import EarshotEcho
import EarshotTestSupport
import Testing

/// Tasks that prefer a connection as their executor run on its I/O thread, go on after
/// awaited replies there, and still run once the connection has closed.
@Suite struct ConnectionExecutorTests {
    @Test func callsResumeOnTheIOThread() async throws {
        try await EchoFixture.with { echo in
            let client = echo.client
            #expect(!client.isOnIOThread)
            let results = try await withTaskExecutorPreference(client) { () async throws -> [Bool] in
                var onIOThread = [client.isOnIOThread]
                for number in 0..<50 {
                    let reply = try await echo.call("Echo", [.variant(.uint32(UInt32(number)))])
                    #expect(reply == [.variant(.uint32(UInt32(number)))])
                    onIOThread.append(client.isOnIOThread)
                }
                return onIOThread
            }
            #expect(results.count == 51 && results.allSatisfy { $0 }, "\(results)")
            // Outside the preference the caller is back on the pool.
            #expect(!client.isOnIOThread)
            // Errors and timeouts are delivered there too.
            await expectDBusError("org.freedesktop.DBus.Error.NoReply") {
                try await withTaskExecutorPreference(client) {
                    _ = try await echo.call("Sleep", [.uint32(20_000)], timeout: .milliseconds(200))
                }
            }
        }
    }

    @Test func jobsRunAfterTheConnectionCloses() async throws {
        try await EchoFixture.with { echo in
            let connection = try await echo.bus.connect()
            let waiting = Task {
                try await withTaskExecutorPreference(connection) { () async throws -> Bool in
                    do {
                        _ = try await connection.call(destination: EchoService.busName, path: EchoService.path,
                                                      interface: EchoService.interfaceName, member: "Sleep", [.uint32(20_000)])
                        return false
                    } catch {
                        // Resumed with the failure, and able to go on running elsewhere.
                        try await Task.sleep(for: .milliseconds(10))
                        return !connection.isOnIOThread
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(200))
            connection.close()
            #expect(try await waiting.value)
            // A task that starts preferring the closed connection runs too.
            let late = await withTaskExecutorPreference(connection) { () async -> Int in
                await Task.yield()
                return 42
            }
            #expect(late == 42)
        }
    }
}
