import EarshotContract
import Foundation
import Testing

/// `docs/api` is what the contract renders (`swift run earshot-api-docs` rewrites it), and
/// every error the contract names is explained there.
@Suite struct APIPagesTests {
    static let directory = InterfaceFileTests.packageRoot.appendingPathComponent("docs/api")

    @Test func thePagesAreCurrent() throws {
        let pages = APIPages.all()
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).filter { $0.hasSuffix(".md") }
        #expect(Set(files) == Set(pages.map(\.name)), "docs/api holds other pages than the contract's: run swift run earshot-api-docs")
        for page in pages {
            let text = try? String(contentsOf: Self.directory.appendingPathComponent(page.name), encoding: .utf8)
            #expect(text == page.text, "docs/api/\(page.name) is not current: run swift run earshot-api-docs")
        }
    }

    @Test func everyErrorNamedIsExplained() {
        let explained = Set(EarshotContract.errorMeanings.map(\.name))
        var named = Set<String>()
        func collect(_ keys: [OptionKey]) {
            for key in keys {
                named.formUnion(key.errors)
                collect(key.keys)
            }
        }
        for method in EarshotContract.services.flatMap(\.interfaces).flatMap(\.methods) {
            named.formUnion(method.errors)
            method.inputs.forEach { collect($0.keys) }
        }
        #expect(named.subtracting(explained).sorted() == [])
        #expect(explained.subtracting(named).sorted() == [], "explained but never named")
    }

    @Test func everyInterfaceSaysHowItBehaves() {
        for service in EarshotContract.services {
            for interface in service.interfaces {
                #expect(!(service.notes[interface.name] ?? []).isEmpty, "\(interface.name) has no notes")
            }
        }
    }
}
