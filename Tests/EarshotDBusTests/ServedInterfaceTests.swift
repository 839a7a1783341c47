import EarshotDBus
import EarshotEcho
import EarshotTestHarness
import Foundation
import Testing

/// What a service serves through `Introspect` is its declaration: the echo service against
/// its file, and a file altered in one argument name is told apart.
@Suite struct ServedInterfaceTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/org.earshot.Echo1.xml")

    @Test func theEchoServiceServesWhatItsFileDeclares() async throws {
        try await EchoFixture.with { echo in
            let served = try await InterfaceCatalog.introspect(echo.client, busName: EchoService.busName, path: EchoService.path)
            let servedElement = InterfaceCatalog.interfaceElement(named: EchoService.interfaceName, in: served)
            let text = try String(contentsOf: Self.file, encoding: .utf8)
            #expect(servedElement != nil)
            #expect(InterfaceCatalog.interfaceElement(named: EchoService.interfaceName, in: text) == servedElement)
            let altered = text.replacingOccurrences(of: "name=\"milliseconds\"", with: "name=\"ms\"")
            #expect(altered != text)
            #expect(InterfaceCatalog.interfaceElement(named: EchoService.interfaceName, in: altered) != servedElement)
        }
    }
}
