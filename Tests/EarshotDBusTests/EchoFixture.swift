import EarshotDBus
import EarshotEcho
import EarshotTestHarness

import Foundation
import Testing

/// A private bus with the echo service running on it and one client connection.
struct EchoFixture {
    let bus: PrivateBus
    let service: ServiceProcess
    let client: DBusConnection

    /// Runs `body` with a fresh fixture and always tears it down.
    static func with<T>(_ body: (EchoFixture) async throws -> T) async throws -> T {
        try await ServiceSession.with("earshot-echo", busName: EchoService.busName) { session in
            try await body(EchoFixture(bus: session.bus, service: session.service, client: session.client))
        }
    }

    func call(_ member: String, _ arguments: [DBusValue] = [], path: ObjectPath = EchoService.path,
              interface: String = EchoService.interfaceName, timeout: Duration = DBusConnection.defaultTimeout) async throws -> [DBusValue] {
        try await client.call(destination: EchoService.busName, path: path, interface: interface,
                              member: member, arguments, timeout: timeout)
    }

    func getProperty(_ name: String, path: ObjectPath = EchoService.path, interface: String = EchoService.interfaceName) async throws -> DBusValue? {
        try await client.call(destination: EchoService.busName, path: path, interface: "org.freedesktop.DBus.Properties",
                              member: "Get", [.string(interface), .string(name)]).first?.variantValue
    }

    func setProperty(_ name: String, _ value: DBusValue) async throws {
        _ = try await client.call(destination: EchoService.busName, path: EchoService.path, interface: "org.freedesktop.DBus.Properties",
                                  member: "Set", [.string(EchoService.interfaceName), .string(name), .variant(value)])
    }
}

/// Waits for the next signal of a subscription, or nil after `timeout`.
func nextSignal(_ subscription: SignalSubscription, timeout: Duration = .seconds(5)) async -> DBusMessage? {
    await subscription.next(timeout: timeout)
}
