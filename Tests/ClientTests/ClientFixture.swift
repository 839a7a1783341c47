import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// The client's tests run on a stack of the real services.
typealias ClientFixture = ServiceStack

extension ServiceStack {
    // MARK: Running the client

    /// Runs `earshot arguments` to its end.
    func earshot(_ arguments: [String], timeout: Duration = .seconds(30)) async throws -> ClientResult {
        try await RunningClient(arguments, bus: bus).wait(timeout: timeout)
    }

    /// Starts `earshot arguments` in the background.
    func start(_ arguments: [String]) throws -> RunningClient {
        try RunningClient(arguments, bus: bus)
    }

    // MARK: Calls of the test's own

    func property(_ busName: String, _ path: ObjectPath, _ interface: String, _ name: String) async throws -> DBusValue? {
        try await client.call(destination: busName, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
                              [.string(interface), .string(name)]).first?.variantValue
    }

    /// Waits until a manager's object-path property (`Current`, `Active`) names an object.
    func waitForObject(_ busName: String, _ name: String, timeout: Duration = .seconds(10)) async throws -> ObjectPath {
        let path = try ObjectPath("/" + busName.replacingOccurrences(of: ".", with: "/"))
        var found: ObjectPath?
        try await eventually("\(busName).\(name) to name an object", timeout: timeout) {
            found = try await property(busName, path, busName, name)?.objectPathValue
            return found.map { $0 != .root } ?? false
        }
        return found!
    }
}
