import EarshotContract
import Foundation
import Testing

/// Bus names and interface names are spelled once, in EarshotContract: no other source of
/// the services, the client library, the CLI or the shared libraries writes one as a string
/// literal. (The test harness and the benchmarks are not yet moved onto the contract, and
/// are not checked.)
@Suite struct SpellingTests {
    static let sources = InterfaceFileTests.packageRoot.appendingPathComponent("Sources")
    static let unchecked = ["EarshotContract", "EarshotTestHarness", "earshot-bench"]

    @Test func busAndInterfaceNamesAreSpelledOnlyInTheContract() throws {
        let names = Set(EarshotContract.services.flatMap { [$0.busName] + $0.interfaces.map(\.name) })
        var found: [String] = []
        let modules = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path).filter { !Self.unchecked.contains($0) }
        #expect(modules.count > 20)
        for module in modules {
            let directory = Self.sources.appendingPathComponent(module)
            for case let file as String in FileManager.default.enumerator(atPath: directory.path) ?? NSEnumerator() where file.hasSuffix(".swift") {
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                for name in names where text.contains("\"\(name)\"") {
                    found.append("\(module)/\(file): \"\(name)\"")
                }
            }
        }
        #expect(found == [], "spell these through EarshotContract")
    }
}
