import EarshotContract
import EarshotTestHarness
import Foundation
import Testing

/// `dbus/NAME.xml` holds exactly what the contract declares for interface NAME, and every
/// declared interface has its file. Set EARSHOT_WRITE_INTERFACE_XML=1 to rewrite the files
/// from the contract.
@Suite struct InterfaceFileTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let directory = packageRoot.appendingPathComponent("dbus")
    static let declared = EarshotContract.services.flatMap(\.interfaces)

    @Test func everyInterfaceFileIsWhatTheContractDeclares() throws {
        if ProcessInfo.processInfo.environment["EARSHOT_WRITE_INTERFACE_XML"] == "1" {
            for interface in Self.declared {
                try IntrospectionXML.document(interfaces: [interface])
                    .write(to: Self.directory.appendingPathComponent(interface.name + ".xml"), atomically: true, encoding: .utf8)
            }
        }
        let files = try InterfaceCatalog.interfaceFiles(in: Self.directory)
        #expect(Set(files.map { $0.deletingPathExtension().lastPathComponent }) == Set(Self.declared.map(\.name)))
        for interface in Self.declared {
            let file = Self.directory.appendingPathComponent(interface.name + ".xml")
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(text == IntrospectionXML.document(interfaces: [interface]),
                    "dbus/\(interface.name).xml differs from the contract (EARSHOT_WRITE_INTERFACE_XML=1 rewrites it)")
        }
    }

    /// `--introspect` prints the service's declared interfaces without a bus.
    @Test(arguments: EarshotContract.services.map(\.executable))
    func introspectPrintsTheDeclaredInterfaces(_ executable: String) async throws {
        let service = try #require(EarshotContract.services.first { $0.executable == executable })
        var environment = ProcessInfo.processInfo.environment
        // Nowhere to connect: the flag must not need a bus.
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
        let printed = try await ToolRun.run([ServiceProcess.productsDirectory.appendingPathComponent(executable).path, "--introspect"],
                                            environment: environment, timeout: .seconds(30))
        #expect(printed == service.introspection)
    }
}
