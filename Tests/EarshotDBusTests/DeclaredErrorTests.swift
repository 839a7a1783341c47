import EarshotDBus
import EarshotEcho
import EarshotTestSupport
import Foundation
import Testing

/// A handler replies only with the errors its method declares (or `Failed`).
@Suite struct DeclaredErrorTests {
    static let path: ObjectPath = "/org/earshot/Test/Declared"
    static let interface = "org.example.Test"
    static let known = "org.example.Test.Error.Known"

    /// In a process without `EARSHOT_UNDECLARED_ERRORS` (this test's own connection), an
    /// undeclared error becomes `Failed` naming it; declared ones and `Failed` go through.
    @Test func anUndeclaredErrorIsRefusedAndNamed() async throws {
        try await EchoFixture.with { echo in
            try echo.client.export(Self.path, interfaces: [DBusInterface(Self.interface, methods: [
                DBusMethod("Fail", in: [DBusArgument("name", "s")], errors: [Self.known]) { call in
                    throw DBusError(name: try call.string(0), message: "as asked")
                },
            ])])
            func fail(_ name: String) async -> DBusError? {
                do {
                    _ = try await echo.client.call(destination: echo.client.uniqueName, path: Self.path, interface: Self.interface,
                                                   member: "Fail", [.string(name)])
                    return nil
                } catch {
                    return error as? DBusError
                }
            }
            #expect(await fail(Self.known) == DBusError(name: Self.known, message: "as asked"))
            #expect(await fail(DBusError.prefix + "Failed") == .failed("as asked"))
            let refused = try #require(await fail("org.example.Test.Error.Other"))
            #expect(refused.name == DBusError.prefix + "Failed")
            #expect(refused.message == "internal error: Fail replied org.example.Test.Error.Other, which it does not declare (as asked)")
        }
    }

    /// The same for setting a property: its setter may refuse only with the errors the
    /// property declares, or with the binding's own for a call it cannot take.
    @Test func anUndeclaredErrorFromASetterIsRefusedAndNamed() async throws {
        try await EchoFixture.with { echo in
            let declaration = PropertyDeclaration("Colour", "s", access: .readwrite, errors: [Self.known])
            try echo.client.export(Self.path, interfaces: [DBusInterface(Self.interface, properties: [
                DBusProperty(declaration) { value, _ in
                    guard let name = value.stringValue, name.contains(".Error.") else { return value }
                    throw DBusError(name: name, message: "as asked")
                },
            ])])
            func set(_ value: DBusValue) async -> DBusError? {
                do {
                    _ = try await echo.client.call(destination: echo.client.uniqueName, path: Self.path,
                                                   interface: "org.freedesktop.DBus.Properties", member: "Set",
                                                   [.string(Self.interface), .string("Colour"), .variant(value)])
                    return nil
                } catch {
                    return error as? DBusError
                }
            }
            #expect(await set(.string("plain")) == nil)
            #expect(await set(.string(Self.known)) == DBusError(name: Self.known, message: "as asked"))
            #expect(await set(.uint32(1))?.name == DBusError.prefix + "InvalidArgs")
            let refused = try #require(await set(.string("org.example.Test.Error.Other")))
            #expect(refused.name == DBusError.prefix + "Failed")
            #expect(refused.message == "internal error: Set Colour replied org.example.Test.Error.Other, which it does not declare (as asked)")
        }
    }

    /// A service the test harness starts ends at once on an undeclared error, saying which,
    /// so that no test passes on an error name the contract does not promise.
    @Test func aServiceUnderTestExitsOnAnUndeclaredError() async throws {
        try await EchoFixture.with { echo in
            await expectDBusError(EchoService.declaredError) { _ = try await echo.call("FailDeclared", [.string(EchoService.declaredError)]) }
            #expect(echo.service.isRunning)
            await expectDBusError(DBusError.prefix + "NoReply") {
                _ = try await echo.call("FailDeclared", [.string("org.earshot.Echo1.Error.Undeclared")], timeout: .seconds(5))
            }
            let deadline = ContinuousClock.now + .seconds(5)
            while echo.service.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(echo.service.exitStatus == 70)
            #expect(echo.service.logText.contains(
                "earshot: undeclared error: FailDeclared replied org.earshot.Echo1.Error.Undeclared, which it does not declare (as asked)"))
        }
    }
}
