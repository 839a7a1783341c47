import ContractCore
import EarshotContract
import Foundation
import Testing

/// Earshot's names are spelled once, in EarshotContract (the errors in ContractCore's
/// EarshotErrorName, the fields the domain cores name in ContractCore's EarshotField): no
/// other source (the services, the domain cores, the client library, the CLI, the shared
/// libraries, the test harness, the benchmarks and the example) writes a bus name,
/// interface name, method name, signal name, property name, key name (of any dictionary a
/// member declares) or error name (whole, or the part after `org.earshot.Error.`) of
/// Earshot's as a string literal, nor builds one from pieces. `Get` is left out: it is also
/// `org.freedesktop.DBus.Properties.Get`, which clients spell. Tests/ is covered too: a
/// test names what it calls and checks through the same declarations.
@Suite struct SpellingTests {
    static let root = InterfaceFileTests.packageRoot
    /// Where the names are spelled: the contract, and the errors' one spelling (ContractCore,
    /// which the domain cores share).
    static let unchecked = ["Sources/EarshotContract", "Sources/ContractCore/EarshotErrorName.swift",
                            "Sources/ContractCore/EarshotField.swift",
                            // This check's own samples.
                            "Tests/EarshotContractTests/SpellingTests.swift"]

    static let names: Set<String> = {
        var names = Set<String>()
        for service in EarshotContract.services {
            names.insert(service.busName)
            for interface in service.interfaces {
                names.insert(interface.name)
                names.formUnion(interface.methods.map(\.name))
                names.formUnion(interface.signals.map(\.name))
                names.formUnion(interface.properties.map(\.name))
                let arguments = interface.methods.flatMap { $0.inputs + $0.outputs } + interface.signals.flatMap(\.arguments)
                names.formUnion(keyNames(arguments.flatMap(\.keys)))
            }
        }
        for error in EarshotErrorName.allCases { names.formUnion([error.name, error.shortName]) }
        names.remove("Get")
        return names
    }()

    /// The names of `keys` and of the keys of their dictionaries.
    static func keyNames(_ keys: [OptionKey]) -> Set<String> {
        keys.reduce(into: Set<String>()) { names, key in
            names.insert(key.name)
            names.formUnion(keyNames(key.keys))
        }
    }

    static func sources() throws -> [String] {
        var files: [String] = []
        for top in ["Sources", "Examples", "Tests"] {
            let directory = root.appendingPathComponent(top)
            for case let file as String in FileManager.default.enumerator(atPath: directory.path) ?? NSEnumerator()
            where file.hasSuffix(".swift") {
                let path = "\(top)/\(file)"
                if !unchecked.contains(where: { path == $0 || path.hasPrefix($0 + "/") }) { files.append(path) }
            }
        }
        return files
    }

    /// The last parts of the interface names (`PassThru`, `Alert`, …), which a name built as
    /// `destination + ".PassThru"` would spell.
    static let nameParts: Set<String> = Set(EarshotContract.services.flatMap { service in
        service.interfaces.map { String($0.name.split(separator: ".").last ?? "") }
    })

    /// Names of Earshot's that are not the contract's: the binding's test service.
    static func isOutsideTheContract(_ literal: String) -> Bool {
        literal.hasPrefix("org.earshot.Echo1")
            // A name in Earshot's namespace that no service owns (the bus policy's tests).
            || literal == "org.earshot.Other1"
    }

    /// String literals that build an Earshot name rather than spell it whole: a piece of a
    /// name with `org.earshot` in it (not prose), or `.` and the last part of an interface's
    /// name.
    static func built(in text: String) -> [(line: Int, literal: String)] {
        var found: [(line: Int, literal: String)] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let parts = line.split(separator: "\"", omittingEmptySubsequences: false)
            // Every other piece between quotes is a literal (escaped quotes do not occur in these names).
            for index in stride(from: 1, to: parts.count - 1, by: 2) {
                let literal = String(parts[index])
                // Prose that mentions a name (help texts) has spaces, and a file's path or a
                // configuration line a slash or `=`; a piece of a name has none of them.
                let partial = literal.contains("org.earshot") && !literal.contains(where: { " /=".contains($0) })
                    && !names.contains(literal)
                    && !isOutsideTheContract(literal)
                let suffix = literal.hasPrefix(".") && nameParts.contains(String(literal.dropFirst()))
                if partial || suffix { found.append((number + 1, literal)) }
            }
        }
        return found
    }

    /// Every field the cores name is a key the contract declares, and the contract declares
    /// it by the field (`OptionKey(.title, …)`), not by a second spelling.
    @Test func theCoresFieldsAreTheContractsKeys() throws {
        for field in EarshotField.allCases { #expect(Self.names.contains(field.name), "\(field.name) is no key of the contract") }
        let directory = Self.root.appendingPathComponent("Sources/EarshotContract")
        var found: [String] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for field in EarshotField.allCases where text.contains("\"\(field.name)\"") { found.append("\(file): \(field.name)") }
        }
        #expect(found == [], "declare these keys by their EarshotField")
    }

    @Test func noEarshotNameIsBuiltFromPieces() throws {
        var found: [String] = []
        for file in try Self.sources() {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            found += Self.built(in: text).map { "\(file):\($0.line): \"\($0.literal)\"" }
        }
        #expect(found == [], "spell these through EarshotContract")
        let sample = """
            let interface = destination + ".PassThru"
            let error = "org.earshot.Error." + name
            let whole = "org.earshot.Capture1.PassThru"
            let echo = "org.earshot.Echo1"
            """
        #expect(Self.built(in: sample).map(\.line) == [1, 2])
    }

    /// Literals that match an Earshot name but are another's: the binding's test service's own
    /// keys, method and property (also in the binding's tests), freedesktop's `Timeout` error
    /// and ALSA's `Input` direction.
    static let othersNames: [String: Set<String>] = [
        "Sources/EarshotEcho/EchoService.swift": ["Mode", "Count", "Options", "Name"],
        "Tests/EarshotDBusTests/ServerTests.swift": ["Mode", "Count", "Options", "Name"],
        "Sources/EarshotDBus/DBusError.swift": ["Timeout"],
        // ALSA's IOID hint.
        "Sources/EarshotALSA/DeviceHints.swift": ["Input"],
    ]

    @Test func earshotNamesAreSpelledOnlyInTheContract() throws {
        #expect(Self.names.count > 40)
        let files = try Self.sources()
        #expect(files.count > 200)
        var found: [String] = []
        for file in files {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            let others = Self.othersNames[file] ?? []
            found += Self.spelled(in: text).filter { !others.contains($0.name) }.map { "\(file):\($0.line): \"\($0.name)\"" }
        }
        #expect(found == [], "spell these through EarshotContract")
    }

    /// No literal misspells a name: a literal of one UpperCamelCase word, of five letters or
    /// more, one edit (a letter added, dropped, changed or two swapped) from an Earshot name
    /// of five or more is a name gone wrong ("MaxDurations"), which the check above, looking
    /// for names as spelled, would let pass.
    @Test func noLiteralMisspellsAnEarshotName() throws {
        var found: [String] = []
        for file in try Self.sources() {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            found += Self.misspelt(in: text).map { "\(file):\($0.line): \"\($0.literal)\" (\($0.name)?)" }
        }
        #expect(found == [], "a misspelt name; spell it through EarshotContract")
    }

    static let longNames = names.filter { $0.count >= 5 && $0.first?.isUppercase == true }

    /// Literals in `text` one edit away from a name, with the name.
    static func misspelt(in text: String) -> [(line: Int, literal: String, name: String)] {
        var found: [(line: Int, literal: String, name: String)] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let parts = line.split(separator: "\"", omittingEmptySubsequences: false)
            for index in stride(from: 1, to: parts.count - 1, by: 2) {
                let literal = String(parts[index])
                guard literal.count >= 5, !names.contains(literal), let first = literal.first, first.isUppercase,
                      literal.dropFirst().first?.isLowercase == true, literal.allSatisfy({ $0.isLetter || $0.isNumber }) else { continue }
                if let name = longNames.first(where: { oneEdit(Array(literal), Array($0)) }) {
                    found.append((number + 1, literal, name))
                }
            }
        }
        return found
    }

    /// Whether `a` becomes `b` by one insertion, deletion, substitution or swap of neighbours.
    static func oneEdit(_ a: [Character], _ b: [Character]) -> Bool {
        if a == b || abs(a.count - b.count) > 1 { return false }
        if a.count == b.count {
            let differ = a.indices.filter { a[$0] != b[$0] }
            return differ.count == 1 || (differ.count == 2 && differ[1] == differ[0] + 1 && a[differ[0]] == b[differ[1]] && a[differ[1]] == b[differ[0]])
        }
        let (short, long) = a.count < b.count ? (a, b) : (b, a)
        guard let at = short.indices.first(where: { short[$0] != long[$0] }) else { return true }
        return Array(short[at...]) == Array(long[(at + 1)...])
    }

    @Test func theMisspellingCheckFindsNearNamesOnly() {
        let sample = """
            let a = ["MaxDurations": .uint32(1), "MaxDuraton": .uint32(1), "MaxDuration": .uint32(1)]
            let b = "Prose with MaxDurations", c = "MAXDURATIONS", d = "Mixer", e = "Blend"
            let f = "MxaDuration"
            """
        let found = Self.misspelt(in: sample)
        #expect(found.map(\.literal) == ["MaxDurations", "MaxDuraton", "MxaDuration"])
        #expect(found.map(\.line) == [1, 1, 3])
        #expect(found.allSatisfy { $0.name == "MaxDuration" })
    }

    /// Names of two words or more (`MaxDuration`, `PresentAlert`, `InvalidData`): within a
    /// literal's prose (messages, help, multi-line texts) such a word is the name and nothing
    /// else. One-word names (`Title`, `State`) are English too, and left to the checks above.
    static let wordNames = names.filter { !$0.contains(".") && $0.first?.isUppercase == true && $0.filter(\.isUppercase).count >= 2 }

    /// The text of every literal in `text` (a line of one, or a line inside a multi-line
    /// one), with its interpolations taken out, and its line number.
    static func literalTexts(in text: String) -> [(line: Int, text: String)] {
        var found: [(line: Int, text: String)] = []
        var inMultiline = false
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if inMultiline {
                if trimmed.hasPrefix("\"\"\"") { inMultiline = false } else { found.append((number + 1, withoutInterpolations(String(line)))) }
                continue
            }
            if trimmed.hasPrefix("//") { continue }
            if line.components(separatedBy: "\"\"\"").count == 2 {
                inMultiline = true
                continue
            }
            let parts = line.split(separator: "\"", omittingEmptySubsequences: false)
            for index in stride(from: 1, to: parts.count - 1, by: 2) { found.append((number + 1, withoutInterpolations(String(parts[index])))) }
        }
        return found
    }

    /// `text` without its `\(…)` parts (nested parentheses included).
    static func withoutInterpolations(_ text: String) -> String {
        var result = "", depth = 0
        var characters = Array(text)[...]
        while let character = characters.popFirst() {
            if depth == 0, character == "\\", characters.first == "(" {
                characters.removeFirst()
                depth = 1
            } else if depth > 0 {
                if character == "(" { depth += 1 } else if character == ")" { depth -= 1 }
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// Names of two words or more written inside the literals of `text`, with their lines.
    static func namedInProse(_ text: String) -> [(line: Int, name: String)] {
        // (The binding's tests name errors of their own, in `org.example`.)
        literalTexts(in: text).filter { !$0.text.contains("org.example.") }.flatMap { literal in
            literal.text.split(whereSeparator: { !($0.isLetter || $0.isNumber) }).map(String.init)
                .filter { wordNames.contains($0) && !names.contains(literal.text) }
                .map { (literal.line, $0) }
        }
    }

    /// Words of a literal's prose that are a name of two words or more gone wrong: of
    /// UpperCamelCase with two capitals or more, no name, one edit from one ("set
    /// MaxDurations to 5"), with the name meant.
    static func misspeltInProse(_ text: String) -> [(line: Int, word: String, name: String)] {
        literalTexts(in: text).flatMap { literal in
            literal.text.split(whereSeparator: { !($0.isLetter || $0.isNumber) }).map(String.init).compactMap { word in
                guard word.count >= 5, !names.contains(word), word.first?.isUppercase == true,
                      word.dropFirst().first?.isLowercase == true, word.filter(\.isUppercase).count >= 2,
                      let name = wordNames.first(where: { oneEdit(Array(word), Array($0)) }) else { return nil }
                return (literal.line, word, name)
            }
        }
    }

    @Test func noLiteralNamesAnEarshotNameInItsProse() throws {
        #expect(Self.wordNames.count > 60)
        var found: [String] = [], misspelt: [String] = []
        for file in try Self.sources() {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            found += Self.namedInProse(text).map { "\(file):\($0.line): \($0.name)" }
            misspelt += Self.misspeltInProse(text).map { "\(file):\($0.line): \($0.word) (\($0.name)?)" }
        }
        #expect(found == [], "interpolate these from EarshotContract (\\(….name))")
        #expect(misspelt == [], "a misspelt name; interpolate it from EarshotContract (\\(….name))")
    }

    @Test func theProseCheckFindsNamesInMessagesAndLeavesInterpolations() {
        let sample = #"""
            throw .failed("KeepEnforced: the service is stopping")
            let help = "Untimed \(Manager.presentAlert.name) calls, PresentAlert then GetState."
            let text = """
                each ChunkMs of audio
                \(Keys.chunkMs.name) and chunks
                """
            // A comment may say MaxDuration.
            let fine = "Keep the tone short", word = "Title of a piece"
            """#
        let found = Self.namedInProse(sample)
        #expect(found.map(\.name) == ["KeepEnforced", "PresentAlert", "GetState", "ChunkMs"])
        #expect(found.map(\.line) == [1, 2, 2, 4])
    }

    @Test func theProseCheckFindsMisspeltNames() {
        let sample = #"""
            throw .failed("set MaxDurations to 5, or MaxDuration to 6")
            let help = "after \(Keys.maxDuration.name), EndOnSilenceMS and PresentAlrt"
            let text = """
                KeepEnforcd, Keep, DBusConnection and MaxDuration
                """
            """#
        let found = Self.misspeltInProse(sample)
        #expect(found.map(\.word) == ["MaxDurations", "EndOnSilenceMS", "PresentAlrt", "KeepEnforcd"])
        #expect(found.map(\.line) == [1, 2, 2, 4])
        #expect(found.map(\.name) == ["MaxDuration", "EndOnSilenceMs", "PresentAlert", "KeepEnforced"])
    }

    /// The Earshot names written as string literals in `text`, with their line numbers.
    static func spelled(in text: String) -> [(line: Int, name: String)] {
        var found: [(line: Int, name: String)] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            // Every other piece between quotes is a literal (as in `built(in:)`).
            let parts = line.split(separator: "\"", omittingEmptySubsequences: false)
            for index in stride(from: 1, to: parts.count - 1, by: 2) where names.contains(String(parts[index])) {
                found.append((number + 1, String(parts[index])))
            }
        }
        return found
    }

    @Test func theCheckFindsSpelledNamesAndLeavesTheRest() {
        let sample = """
            let a = PiecesContract.Manager.drop.name
            try await client.call(.capture, "PerformAudioPassThru", [request])
            MatchRule(interface: "org.earshot.Capture1.PassThru", member: "Finished")
            call(member: "Get", [.string("Title")])
            let request: [String: DBusValue] = ["MaxDuration": .uint32(500), "Prose with MaxDuration": .string("")]
            """
        let found = Self.spelled(in: sample)
        #expect(found.map(\.line) == [2, 3, 3, 4, 5])
        #expect(found.map(\.name) == ["PerformAudioPassThru", "org.earshot.Capture1.PassThru", "Finished", "Title", "MaxDuration"])
    }
}
