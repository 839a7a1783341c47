import EarshotDBus
import EarshotEcho
import EarshotTestHarness
import Foundation
import Testing

@Suite struct ActivationTests {
    /// A private bus that can start the echo service (an activation file for its name), and
    /// a client on it.
    static func withActivatableEcho(_ body: (DBusConnection) async throws -> Void) async throws {
        let services = try FileManager.default.url(for: .itemReplacementDirectory, in: .userDomainMask,
                                                   appropriateFor: URL(fileURLWithPath: NSTemporaryDirectory()), create: true)
        defer { try? FileManager.default.removeItem(at: services) }
        let echo = ServiceProcess.productsDirectory.appendingPathComponent("earshot-echo").path
        try """
            [D-BUS Service]
            Name=\(EchoService.busName)
            Exec=\(echo) --log-level debug

            """.write(to: services.appendingPathComponent("\(EchoService.busName).service"), atomically: true, encoding: .utf8)
        let bus = try await PrivateBus.start(serviceDirectory: services)
        defer { bus.stop() }
        let client = try await bus.connect()
        defer { client.close() }
        #expect(try await client.nameOwner(EchoService.busName) == nil)
        try await body(client)
        // The activated service is stopped with the bus (it exits when the bus goes away).
    }

    @Test func theBusStartsTheServiceOnFirstCall() async throws {
        try await Self.withActivatableEcho { client in
            let reply = try await client.call(destination: EchoService.busName, path: EchoService.path,
                                              interface: EchoService.interfaceName, member: "Echo", [.variant(.string("woken"))])
            #expect(reply == [.variant(.string("woken"))])
            #expect(try await client.nameOwner(EchoService.busName) != nil)
        }
    }

    /// `NO_AUTO_START`: a call that may not start the service fails while nobody owns its
    /// name, and the service stays stopped (a service that left is its unit's to restart).
    @Test func aCallThatMayNotStartTheServiceFailsAndLeavesItStopped() async throws {
        try await Self.withActivatableEcho { client in
            do {
                _ = try await client.call(destination: EchoService.busName, path: EchoService.path, interface: EchoService.interfaceName,
                                          member: "Echo", [.variant(.string("asleep"))], startingService: false)
                Issue.record("the call was answered")
            } catch let error as DBusError {
                #expect(error.name == "org.freedesktop.DBus.Error.NameHasNoOwner", "\(error)")
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await client.nameOwner(EchoService.busName) == nil)
        }
    }
}
