import EarshotDBus
import EarshotEcho
import EarshotTestHarness
import Foundation
import Testing

/// Each interface file must equal what the running service serves. Set
/// EARSHOT_WRITE_INTERFACE_XML=1 to rewrite the files from the running services.
@Suite struct InterfaceFileTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let rewrite = ProcessInfo.processInfo.environment["EARSHOT_WRITE_INTERFACE_XML"] == "1"

    /// Compares `file` with the `interface` element served at `path` by `busName`.
    static func check(_ file: URL, interface: String, connection: DBusConnection, busName: String, path: ObjectPath) async throws {
        let served = try await InterfaceCatalog.introspect(connection, busName: busName, path: path)
        let servedElement = try #require(InterfaceCatalog.interfaceElement(named: interface, in: served),
                                         "\(busName) does not serve \(interface) at \(path)")
        if rewrite {
            guard let declared = Self.document(for: interface, served: served) else { return }
            try declared.write(to: file, atomically: true, encoding: .utf8)
        }
        let text = try String(contentsOf: file, encoding: .utf8)
        let fileElement = InterfaceCatalog.interfaceElement(named: interface, in: text)
        #expect(fileElement == servedElement, "\(file.lastPathComponent) differs from what \(busName) serves at \(path)")
    }

    /// A standalone document holding only `interface`, cut from a served document.
    static func document(for interface: String, served: String) -> String? {
        let lines = served.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: "  <interface name=\"\(interface)\">"),
              let end = lines[start...].firstIndex(of: "  </interface>") else { return nil }
        return Introspection.doctype + "<node>\n" + lines[start...end].joined(separator: "\n") + "\n</node>\n"
    }

    @Test func everyDBusInterfaceFileMatchesItsService() async throws {
        let files = try InterfaceCatalog.interfaceFiles(in: Self.packageRoot.appendingPathComponent("dbus"))
        if Self.rewrite {
            for interface in InterfaceCatalog.sources.keys where !files.contains(where: { $0.lastPathComponent == interface + ".xml" }) {
                try "".write(to: Self.packageRoot.appendingPathComponent("dbus/\(interface).xml"), atomically: true, encoding: .utf8)
            }
            return try await everyDBusInterfaceFileMatchesItsServiceAfterRewrite()
        }
        for file in files {
            let interface = file.deletingPathExtension().lastPathComponent
            guard let source = InterfaceCatalog.sources[interface] else {
                Issue.record("dbus/\(file.lastPathComponent): no service in InterfaceCatalog serves \(interface)")
                continue
            }
            let bus = try await PrivateBus.start()
            defer { bus.stop() }
            let service = try await ServiceProcess(source.executable, arguments: source.arguments, bus: bus,
                                                   busName: source.busName, environment: source.environment)
            defer { service.stop() }
            let client = try await bus.connect()
            defer { client.close() }
            try await Self.check(file, interface: interface, connection: client, busName: source.busName,
                                 path: try await source.objectPath(client))
            client.close()
            await service.shutdown()
            await bus.shutdown()
        }
    }

    func everyDBusInterfaceFileMatchesItsServiceAfterRewrite() async throws {
        let files = try InterfaceCatalog.interfaceFiles(in: Self.packageRoot.appendingPathComponent("dbus"))
        for file in files {
            let interface = file.deletingPathExtension().lastPathComponent
            guard let source = InterfaceCatalog.sources[interface] else { continue }
            let bus = try await PrivateBus.start()
            let service = try await ServiceProcess(source.executable, arguments: source.arguments, bus: bus,
                                                   busName: source.busName, environment: source.environment)
            let client = try await bus.connect()
            try await Self.check(file, interface: interface, connection: client, busName: source.busName,
                                 path: try await source.objectPath(client))
            client.close()
            await service.shutdown()
            await bus.shutdown()
        }
    }

    @Test func theCheckComparesTheEchoServiceWithItsFile() async throws {
        let file = Self.packageRoot.appendingPathComponent("Tests/EarshotDBusTests/Fixtures/org.earshot.Echo1.xml")
        try await EchoFixture.with { echo in
            try await Self.check(file, interface: EchoService.interfaceName, connection: echo.client,
                                 busName: EchoService.busName, path: EchoService.path)
            // A file that differs in one argument name is caught.
            let text = try String(contentsOf: file, encoding: .utf8)
            let altered = text.replacingOccurrences(of: "name=\"milliseconds\"", with: "name=\"ms\"")
            #expect(altered != text)
            let served = try await InterfaceCatalog.introspect(echo.client, busName: EchoService.busName, path: EchoService.path)
            #expect(InterfaceCatalog.interfaceElement(named: EchoService.interfaceName, in: altered)
                    != InterfaceCatalog.interfaceElement(named: EchoService.interfaceName, in: served))
        }
    }
}
