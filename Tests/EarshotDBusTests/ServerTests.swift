import ContractCore
import EarshotDBus
import EarshotTestSupport
import EarshotEcho
import Foundation
import Testing

@Suite struct ServerTests {
    @Test func introspectionIsGeneratedFromTheDeclaration() async throws {
        try await EchoFixture.with { echo in
            let xml = try await echo.call("Introspect", interface: "org.freedesktop.DBus.Introspectable").first?.stringValue
            let expected = Introspection.document(interfaces: [EchoService().interface()], children: [])
            #expect(xml == expected)

            let root = try await echo.call("Introspect", path: "/", interface: "org.freedesktop.DBus.Introspectable").first?.stringValue
            #expect(root?.contains("<node name=\"org\"/>") == true)
            let middle = try await echo.call("Introspect", path: "/org/earshot", interface: "org.freedesktop.DBus.Introspectable").first?.stringValue
            #expect(middle?.contains("<node name=\"Echo1\"/>") == true)
            #expect(middle?.contains("org.earshot.Echo1\"") == false)
        }
    }

    @Test func objectsComeAndGoAtRunTime() async throws {
        try await EchoFixture.with { echo in
            let path = try #require(try await echo.call("AddChild", [.string("first")]).first?.objectPathValue)
            #expect(path == "/org/earshot/Echo1/Child/first")
            #expect(try await echo.call("Ping", path: path, interface: EchoService.childInterfaceName) == [.objectPath(path)])
            #expect(try await echo.getProperty("Name", path: path, interface: EchoService.childInterfaceName) == .string("first"))
            let listing = try await echo.call("Introspect", interface: "org.freedesktop.DBus.Introspectable").first?.stringValue
            #expect(listing?.contains("<node name=\"Child\"/>") == true)

            _ = try await echo.call("RemoveChild", [.string("first")])
            await expectDBusError("org.freedesktop.DBus.Error.UnknownObject") {
                _ = try await echo.call("Ping", path: path, interface: EchoService.childInterfaceName)
            }
            let after = try await echo.call("Introspect", interface: "org.freedesktop.DBus.Introspectable").first?.stringValue
            #expect(after?.contains("<node name=\"Child\"/>") == false)
        }
    }

    /// An owner that keeps its object, whose handler refers back to the owner.
    final class ObjectOwner: Sendable {
        let object = Locked<ExportedObject?>(nil)
        func ping() -> [DBusValue] { [.string("pong")] }
    }

    @Test func unexportingEndsTheCycleThroughTheHandlers() async throws {
        try await EchoFixture.with { echo in
            let path: ObjectPath = "/org/earshot/Test/Owned"
            var owner: ObjectOwner? = ObjectOwner()
            weak let watched = owner
            let exported = try echo.client.export(path, interfaces: [DBusInterface("org.example.Test", methods: [
                DBusMethod("Ping", out: [DBusArgument("reply", "s")]) { [owner] _ in owner?.ping() ?? [] },
            ])])
            owner?.object.withLock { $0 = exported }
            let reply = try await echo.client.call(destination: echo.client.uniqueName, path: path,
                                                   interface: "org.example.Test", member: "Ping")
            #expect(reply == [.string("pong")])

            echo.client.unexport(path)
            owner = nil
            #expect(watched == nil, "the unexported object's handler still holds its owner")
            #expect(exported.interfaces.first?.method("Ping") != nil, "the declaration stays readable")
        }
    }

    @Test func standardErrorNames() async throws {
        try await EchoFixture.with { echo in
            await expectDBusError("org.freedesktop.DBus.Error.UnknownObject") { _ = try await echo.call("Echo", path: "/nowhere") }
            await expectDBusError("org.freedesktop.DBus.Error.UnknownMethod") { _ = try await echo.call("Nope") }
            await expectDBusError("org.freedesktop.DBus.Error.UnknownInterface") { _ = try await echo.call("Echo", interface: "org.example.Nope") }
            let mismatch = await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") { _ = try await echo.call("EchoBytes", [.string("x")]) }
            #expect(mismatch?.message == "org.earshot.Echo1.EchoBytes takes 'ay', got 's'")
            await expectDBusError("org.freedesktop.DBus.Error.UnknownProperty") { _ = try await echo.getProperty("Nope") }
            await expectDBusError("org.freedesktop.DBus.Error.PropertyReadOnly") { try await echo.setProperty("Counter", .uint32(1)) }
            await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") { try await echo.setProperty("Label", .uint32(1)) }
            // The handler's own named error, with its message.
            let custom = await expectDBusError(EarshotErrorName.invalidData.name) { try await echo.setProperty("Label", .string("")) }
            #expect(custom?.message == "Label: must not be empty")
            let failed = await expectDBusError(EarshotErrorName.rejected.name) {
                _ = try await echo.call("Fail", [.string(EarshotErrorName.rejected.name), .string("busy for 1234 ms")])
            }
            #expect(failed?.message == "busy for 1234 ms")
            // Peer is served.
            #expect(try await echo.call("Ping", interface: "org.freedesktop.DBus.Peer").isEmpty)
            let machine = try await echo.call("GetMachineId", interface: "org.freedesktop.DBus.Peer")
            #expect(machine.first?.stringValue?.count == 32)
        }
    }

    @Test func propertiesGetGetAllSet() async throws {
        try await EchoFixture.with { echo in
            #expect(try await echo.getProperty("Label") == .string("echo"))
            try await echo.setProperty("Label", .string("renamed"))
            #expect(try await echo.getProperty("Label") == .string("renamed"))
            let all = try await echo.client.call(destination: EchoService.busName, path: EchoService.path,
                                                 interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                                                 [.string(EchoService.interfaceName)])
            let table = try #require(all.first?.stringKeyedValue)
            #expect(Set(table.keys) == ["Counter", "Label", "Secret", "Version"])
            #expect(table["Version"] == .string("1"))
        }
    }

    @Test func propertiesChangedOnlyWhenAValueReallyChanges() async throws {
        try await EchoFixture.with { echo in
            let changes = try await echo.client.subscribe(MatchRule(
                sender: EchoService.busName, interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged", path: EchoService.path))
            _ = try await echo.call("SetCounter", [.uint32(5)])
            _ = try await echo.call("SetCounter", [.uint32(5)])  // same value: no signal
            _ = try await echo.call("SetCounter", [.uint32(6)])
            try await echo.setProperty("Secret", .string("s1"))  // invalidates: name only
            try await echo.setProperty("Label", .string("echo")) // unchanged: no signal

            let first = try #require(await nextSignal(changes))
            #expect(first.body == [.string(EchoService.interfaceName), .vardict(["Counter": .uint32(5)]), .strings([])])
            let second = try #require(await nextSignal(changes))
            #expect(second.body == [.string(EchoService.interfaceName), .vardict(["Counter": .uint32(6)]), .strings([])])
            let third = try #require(await nextSignal(changes))
            #expect(third.body == [.string(EchoService.interfaceName), .vardict([:]), .strings(["Secret"])])
            #expect(await nextSignal(changes, timeout: .milliseconds(300)) == nil)
        }
    }

    /// A property read live has no stored value: `Get` and `GetAll` ask its reader, it
    /// cannot be set, and after the object leaves the bus its last value stays (the
    /// reader, which may hold the object's owner, is let go).
    @Test func propertiesReadLiveComeFromTheirReader() async throws {
        try await EchoFixture.with { echo in
            let path: ObjectPath = "/org/earshot/Test/Live"
            let declaration = InterfaceDeclaration("org.example.Test", methods: [], signals: [], properties: [
                PropertyDeclaration("Count", "t", doc: "Counted elsewhere.", emitsChangedSignal: .false),
                PropertyDeclaration("Name", "s", doc: "Stored."),
            ])
            let counter = Locked<UInt64>(7)
            var owner: ObjectOwner? = ObjectOwner()
            weak let watched = owner
            let exported = try echo.client.export(path, interfaces: [
                DBusInterface(declaration, methods: [], readers: ["Count": { [owner] in
                    _ = owner
                    return .uint64(counter.withLock { $0 })
                }]),
            ], values: [])
            func get(_ name: String) async throws -> DBusValue? {
                try await echo.client.call(destination: echo.client.uniqueName, path: path, interface: "org.freedesktop.DBus.Properties",
                                           member: "Get", [.string("org.example.Test"), .string(name)]).first?.variantValue
            }
            #expect(try await get("Count") == .uint64(7))
            counter.withLock { $0 = 41 }
            #expect(try await get("Count") == .uint64(41))
            #expect(exported.property("Count") == .uint64(41))
            let all = try await echo.client.call(destination: echo.client.uniqueName, path: path, interface: "org.freedesktop.DBus.Properties",
                                                 member: "GetAll", [.string("org.example.Test")])
            #expect(all.first?.stringKeyedValue?["Count"] == .uint64(41))
            #expect(all.first?.stringKeyedValue?["Name"] == .string(""))
            #expect(throws: DBusError.self) { try exported.set("Count", .uint64(1)) }

            counter.withLock { $0 = 42 }
            echo.client.unexport(path)
            owner = nil
            #expect(watched == nil, "the unexported object's reader still holds its owner")
            counter.withLock { $0 = 99 }
            #expect(exported.property("Count") == .uint64(42))
        }
    }

    @Test func callerIdentityIsKnown() async throws {
        try await EchoFixture.with { echo in
            let reply = try await echo.call("WhoAmI")
            #expect(reply.first == .string(echo.client.uniqueName))
            #expect(reply[1] == .uint32(getuid()))
            #expect(reply[2].stringValue?.isEmpty == false)
        }
    }

    @Test func optionsFollowTheContract() async throws {
        try await EchoFixture.with { echo in
            let normalized = try await echo.call("Options", [.vardict(["Mode": .string("fast"), "Count": .byte(3)])])
            #expect(normalized == [.vardict(["Mode": .string("fast"), "Count": .uint32(3), "Ratio": .double(0.5), "Name": .string("")])])
            let range = await expectDBusError(EarshotErrorName.invalidData.name) {
                _ = try await echo.call("Options", [.vardict(["Mode": .string("fast"), "Count": .uint32(0)])])
            }
            #expect(range?.message == "Count: 0 is outside 1..10")
            let unknown = await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") {
                _ = try await echo.call("Options", [.vardict(["Mode": .string("fast"), "Colour": .string("red")])])
            }
            #expect(unknown?.message.hasPrefix("Colour: unknown key") == true)
        }
    }
}
