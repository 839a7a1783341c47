import EarshotDBus
import EarshotEcho
import EarshotTestHarness
import Foundation
import Testing

@Suite struct ActivationTests {
    @Test func theBusStartsTheServiceOnFirstCall() async throws {
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
        let reply = try await client.call(destination: EchoService.busName, path: EchoService.path,
                                          interface: EchoService.interfaceName, member: "Echo", [.variant(.string("woken"))])
        #expect(reply == [.variant(.string("woken"))])
        #expect(try await client.nameOwner(EchoService.busName) != nil)
        // The activated service is stopped with the bus (it exits when the bus goes away).
    }
}
