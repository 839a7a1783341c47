import EarshotContract
import Foundation
import Testing

/// Earshot's names are spelled once, in EarshotContract: no other source (the services, the
/// client library, the CLI, the shared libraries, the test harness, the benchmarks and the
/// example) writes a bus name, interface name, method name or signal name of Earshot's as a
/// string literal. `Get` is left out: it is also `org.freedesktop.DBus.Properties.Get`,
/// which clients spell. Tests are left out on purpose: they call the services as a user's
/// script would, by the names on the wire, so that renaming a member in the contract
/// breaks them.
@Suite struct SpellingTests {
    static let root = InterfaceFileTests.packageRoot
    static let unchecked = ["Sources/EarshotContract"]

    static let names: Set<String> = {
        var names = Set<String>()
        for service in EarshotContract.services {
            names.insert(service.busName)
            for interface in service.interfaces {
                names.insert(interface.name)
                names.formUnion(interface.methods.map(\.name))
                names.formUnion(interface.signals.map(\.name))
            }
        }
        names.remove("Get")
        return names
    }()

    static func sources() throws -> [String] {
        var files: [String] = []
        for top in ["Sources", "Examples"] {
            let directory = root.appendingPathComponent(top)
            for case let file as String in FileManager.default.enumerator(atPath: directory.path) ?? NSEnumerator()
            where file.hasSuffix(".swift") {
                let path = "\(top)/\(file)"
                if !unchecked.contains(where: { path.hasPrefix($0 + "/") }) { files.append(path) }
            }
        }
        return files
    }

    @Test func earshotNamesAreSpelledOnlyInTheContract() throws {
        #expect(Self.names.count > 40)
        let files = try Self.sources()
        #expect(files.count > 200)
        var found: [String] = []
        for file in files {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            found += Self.spelled(in: text).map { "\(file):\($0.line): \"\($0.name)\"" }
        }
        #expect(found == [], "spell these through EarshotContract")
    }

    /// The Earshot names written as string literals in `text`, with their line numbers.
    static func spelled(in text: String) -> [(line: Int, name: String)] {
        var found: [(line: Int, name: String)] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            for name in names.sorted() where line.contains("\"\(name)\"") { found.append((number + 1, name)) }
        }
        return found
    }

    @Test func theCheckFindsSpelledNamesAndLeavesTheRest() {
        let sample = """
            let a = PiecesContract.Manager.drop.name
            try await client.call(.capture, "PerformAudioPassThru", [request])
            MatchRule(interface: "org.earshot.Capture1.PassThru", member: "Finished")
            call(member: "Get", [.string("Title")])
            """
        let found = Self.spelled(in: sample)
        #expect(found.map(\.line) == [2, 3, 3])
        #expect(found.map(\.name) == ["PerformAudioPassThru", "Finished", "org.earshot.Capture1.PassThru"])
    }
}
