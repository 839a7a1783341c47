import EarshotDBus
import EarshotTestSupport
import EarshotEcho
import EarshotTestHarness
import Foundation
import Glibc
import Testing

@Suite struct LifecycleTests {
    @Test func aServiceExitsNonZeroWhenTheBusDies() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let service = try await ServiceProcess("earshot-echo", bus: bus, busName: EchoService.busName)
        defer { service.stop() }
        let client = try await bus.connect()
        let pending = Task { try await client.call(destination: EchoService.busName, path: EchoService.path,
                                                   interface: EchoService.interfaceName, member: "Sleep", [.uint32(10_000)]) }
        try await Task.sleep(for: .milliseconds(100))

        bus.kill()

        let status = await service.waitForExit(timeout: .seconds(10))
        #expect(status == 2, "exit status \(String(describing: status)); log:\n\(service.logText)")
        #expect(service.logText.contains("lost the bus"))
        // The client is told too: its pending call fails and disconnected() returns a reason.
        await #expect(throws: DBusError.self) { _ = try await pending.value }
        let reason = await client.disconnected()
        #expect(reason?.name == "org.freedesktop.DBus.Error.Disconnected")
        #expect(!client.isOpen)
        await expectDBusError("org.freedesktop.DBus.Error.Disconnected") {
            _ = try await client.call(destination: EchoService.busName, path: EchoService.path,
                                      interface: EchoService.interfaceName, member: "Echo", [.variant(.byte(1))])
        }
        client.close()
    }

    @Test func sigtermShutsDownCleanly() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let service = try await ServiceProcess("earshot-echo", bus: bus, busName: EchoService.busName)
        service.signal(SIGTERM)
        let status = await service.waitForExit(timeout: .seconds(10))
        #expect(status == 0, "log:\n\(service.logText)")
        #expect(service.logText.contains("shutting down"))
        let client = try await bus.connect()
        defer { client.close() }
        #expect(try await client.nameOwner(EchoService.busName) == nil)
    }

    @Test func aSecondInstanceRefusesToStart() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let first = try await ServiceProcess("earshot-echo", bus: bus, busName: EchoService.busName)
        defer { first.stop() }
        let second = try await ServiceProcess("earshot-echo", bus: bus, busName: nil)
        let status = await second.waitForExit(timeout: .seconds(10))
        #expect(status == 1)
        #expect(second.logText.contains("start-up failed: the name \(EchoService.busName) is already owned by :"), "\(second.logText)")
        #expect(first.isRunning)
    }

    @Test func noBusIsAClearStartupError() throws {
        let path = ServiceProcess.productsDirectory.appendingPathComponent("earshot-echo").path
        let (status, output) = try Self.run(path, [], environment: ["XDG_RUNTIME_DIR": "/nonexistent", "PATH": "/usr/bin:/bin"])
        #expect(status == 1)
        #expect(output.contains("cannot connect to the session bus"), "\(output)")
        let (badStatus, badOutput) = try Self.run(path, ["--address", "unix:path=/nonexistent/bus"], environment: [:])
        #expect(badStatus == 1)
        #expect(badOutput.contains("cannot connect"), "\(badOutput)")
    }

    @Test func clientsCloseCleanlyAndRepeatedly() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let before = Self.openDescriptors()
        for _ in 0..<50 {
            let connection = try await bus.connect()
            let waiter = Task { await connection.disconnected() }
            connection.close()
            connection.close()
            #expect(await waiter.value == nil)
        }
        // Each connection holds a socket and an eventfd until it is released: a leak would
        // leave 100 more. Tests running alongside open some too, hence the margin.
        var after = Self.openDescriptors()
        for _ in 0..<100 where after > before + 4 {
            try await Task.sleep(for: .milliseconds(10))
            after = Self.openDescriptors()
        }
        #expect(after < before + 50, "\(before) descriptors before, \(after) after 50 connections")
    }

    @Test func closedConnectionsAreReleasedWithTheirObjects() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        weak var released: DBusConnection?
        do {
            let connection = try await bus.connect()
            try connection.export("/x", interfaces: [DBusInterface("org.example.X1", methods: [DBusMethod("M") { _ in [] }])])
            released = connection
            connection.close()
        }
        for _ in 0..<200 where released != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(released == nil)
    }

    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }

    @Test func helpDescribesTheCommonFlags() throws {
        let (status, output) = try Self.run(ServiceProcess.productsDirectory.appendingPathComponent("earshot-echo").path, ["--help"])
        #expect(status == 0)
        for flag in ["--system", "--address", "--log-level", "--help"] {
            #expect(output.contains(flag), "\(output)")
        }
    }

    static func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
