import EarshotTestHarness
import Foundation

/// Whether a release service is laid out as deploy/release-build meant: the functions its
/// link order names together, and deploy/release-layout.ld's sections where it puts them.
/// Either can stop applying without a word from the linker (a toolchain that names its
/// sections otherwise, an order from another build), so the build runs this and fails.
enum LinkLayoutCheck {
    /// The share of an order's functions that may be missing from the binary.
    static let missingTolerance = 0.02

    static func verify(_ executables: [String], orders: URL, nm: String) async throws {
        var problems: [String] = []
        for executable in executables {
            let path = try builtService(executable)
            let orderFile = orders.appendingPathComponent(executable + ".order")
            let names = try String(contentsOf: orderFile, encoding: .utf8).split(separator: "\n").map(String.init)
            let table = try await SymbolTable(executable: path, nm: nm)
            let sections = try await Self.sections(of: path)
            guard let text = sections.first(where: { $0.name == ".text" }) else {
                problems.append("\(executable): no .text section")
                continue
            }
            let found = orderProblems(executable, names: names, table: table, textStart: text.address)
                + layoutProblems(executable, sections: sections, table: table)
            problems += found
            if found.isEmpty { progress("\(executable): \(names.count) ordered functions at the front of the code; layout as designed") }
        }
        guard problems.isEmpty else {
            throw BenchmarkError("the release layout did not apply:\n" + problems.joined(separator: "\n"))
        }
    }

    /// The ordered functions must all be there, at the front of the code: 95 % of them
    /// within twice their own size from its start. (Ordering a function moves the whole
    /// input section it is in, with the functions that share it in archives built without
    /// a section per function, such as the Swift runtime's: measured, 1.6 to 1.7 times. An
    /// order that did not apply leaves them where the profile found them, spread over the
    /// code: 2.6 to 4.2 times.)
    static func orderProblems(_ executable: String, names: [String], table: SymbolTable, textStart: UInt64) -> [String] {
        guard !names.isEmpty else { return ["\(executable): its link order is empty"] }
        let ordered = Set(names)
        let found = table.symbols.filter { ordered.contains($0.name) && $0.address >= textStart }
        var problems: [String] = []
        let missing = ordered.count - Set(found.lazy.map(\.name)).count
        if Double(missing) > missingTolerance * Double(ordered.count) {
            problems.append("\(executable): \(missing) of the \(ordered.count) functions its order names are not in its code (an order from another build?)")
        }
        guard !found.isEmpty else { return problems + ["\(executable): none of its ordered functions is in its code"] }
        let bytes = found.reduce(UInt64(0)) { $0 + $1.size }
        let offsets = found.map { $0.address - textStart }.sorted()
        let reach = offsets[min(offsets.count - 1, offsets.count * 95 / 100)]
        if reach > 2 * bytes {
            problems.append("\(executable): 95 % of its \(found.count) ordered functions (\(bytes / 1024) KiB) reach \(reach / 1024) KiB into "
                            + "the code, more than twice their size (the order did not apply)")
        }
        return problems
    }

    /// deploy/release-layout.ld: the PLT and the compiler's private functions before the
    /// code; Foundation's ICU data, where linked, in a section of its own.
    static func layoutProblems(_ executable: String, sections: [(name: String, address: UInt64, size: UInt64)],
                               table: SymbolTable) -> [String] {
        func named(_ name: String) -> (address: UInt64, size: UInt64)? { sections.first { $0.name == name }.map { ($0.address, $0.size) } }
        var problems: [String] = []
        guard let text = named(".text") else { return ["\(executable): no .text section"] }
        if let plt = named(".plt"), plt.address > text.address {
            problems.append("\(executable): the PLT comes after the code")
        }
        if let privateCode = named(".text.private") {
            if privateCode.size == 0 || privateCode.address > text.address {
                problems.append("\(executable): .text.private is empty or after the code (LLVM names its private functions otherwise?)")
            }
        } else {
            problems.append("\(executable): no .text.private section: the compiler's private functions were not moved (LLVM names them otherwise?)")
        }
        let icuPlaced = named(".rodata.icu").map { $0.size >= 1 << 20 && $0.address > text.address } ?? false
        if table.hasICUData, !icuPlaced {
            problems.append("\(executable): ICU's data is not in .rodata.icu after the code (Foundation's archive member renamed?)")
        }
        return problems
    }

    /// Section names, addresses and sizes (readelf -SW).
    static func sections(of path: String) async throws -> [(name: String, address: UInt64, size: UInt64)] {
        let listing = try await ToolRun.run(["/usr/bin/readelf", "-SW", path])
        var sections: [(name: String, address: UInt64, size: UInt64)] = []
        for line in listing.split(separator: "\n") {
            // "  [37] .text.private     PROGBITS        000000000068f4c0 68e4c0 031caa 00  AX ..."
            guard let close = line.firstIndex(of: "]") else { continue }
            let fields = line[line.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 5, let address = UInt64(fields[2], radix: 16), let size = UInt64(fields[4], radix: 16) else { continue }
            sections.append((String(fields[0]), address, size))
        }
        return sections
    }
}
