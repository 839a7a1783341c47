import ArgumentParser
import EarshotTestHarness
import Foundation
import Glibc

/// `earshot-bench link-order`: which functions each release service uses while it
/// starts, idles and works, written as lld symbol ordering files, so that the linker puts
/// them together and a service maps a few dense megabytes of its binary instead of pages
/// scattered over all of it.
struct LinkOrderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "link-order",
        abstract: "Profile which parts of each release service's binary it uses; write the linker's symbol order.",
        discussion: """
            Runs each service built in release mode next to this binary alone on a private bus \
            (the test stack's embedded defaults), from a page cache that holds none of its \
            binary and with the block device's read-ahead at 0 (root only; restored after), so \
            that the pages it has resident are the ones it touched, --runs times over. The pages resident \
            --idle-seconds after any start come first, then those the load benchmark's scenario adds in \
            --busy-seconds; every function (llvm-nm) on those pages is written, in that order, to \
            OUTPUT-DIRECTORY/SERVICE.order, which deploy/release-build hands to lld \
            (--symbol-ordering-file) when it links the service again. The compiler's private \
            functions have no symbols and cannot be named there: deploy/release-layout.ld puts \
            all of them, with the PLT, in front of the code. Without root the read-ahead stays \
            on and the profile is coarser (it counts the pages read ahead). With --verify it \
            profiles nothing and checks instead that each service as built follows its order \
            and the layout, failing when either no longer applies.
            """)

    @Option(help: "Where the .order files go.")
    var outputDirectory = ".build/link-order"

    @Flag(help: "Check the services as built against OUTPUT-DIRECTORY's orders and deploy/release-layout.ld instead of profiling.")
    var verify = false

    @Option(help: "Seconds after the name is owned before the idle pages are read.")
    var idleSeconds = 2.0

    @Option(help: "Seconds of the load scenario before the busy pages are read.")
    var busySeconds = 5.0

    @Option(help: "Concurrent clients during the busy phase.")
    var clients = 2

    @Option(help: "Starts of each service: the order holds what any of them touched, as one start can miss code another runs.")
    var runs = 3

    func validate() throws {
        guard idleSeconds >= 0, busySeconds > 0, clients >= 1, runs >= 1 else {
            throw ValidationError("--idle-seconds must not be negative; --busy-seconds, --clients and --runs must be positive")
        }
    }

    func run() async throws {
        if verify {
            try await LinkLayoutCheck.verify(ServiceStack.services.map(\.executable), orders: URL(fileURLWithPath: outputDirectory),
                                       nm: try Self.llvmNM())
            return
        }
        let executables = ServiceStack.services.map(\.executable)
        let paths = try executables.map(builtService)
        let nm = try Self.llvmNM()
        let directory = URL(fileURLWithPath: outputDirectory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let readAhead = ReadAheadOff(for: URL(fileURLWithPath: paths[0]))
        defer { readAhead.restore() }
        let (idle, busy, clients, runs) = (Duration.milliseconds(Int(idleSeconds * 1000)), Duration.milliseconds(Int(busySeconds * 1000)), clients, runs)
        let output = directory
        let report = try await runInterruptibly(interrupted: "the bus, the services and the temporary files are gone") {
            try await ServiceStack.with([]) { stack in
                var rows: [LinkOrderReport.Row] = []
                for (service, path) in zip(ServiceStack.services, paths) {
                    var idlePages = Set<UInt64>(), busyPages = Set<UInt64>()
                    for run in 1...runs {
                        progress("\(service.executable): start, idle, busy (\(run) of \(runs))")
                        try dropFromPageCache(path)
                        let process = try await stack.launch(service.executable)
                        try await Task.sleep(for: idle)
                        idlePages.formUnion(try ResidentPages.of(path, in: process.pid).pages)
                        try await FootprintBenchmark.busyPhase(service.busName, stack: stack, clients: clients, duration: busy)
                        busyPages.formUnion(try ResidentPages.of(path, in: process.pid).pages)
                        await process.shutdown()
                    }
                    let order = try await SymbolTable(executable: path, nm: nm).order(touching: [idlePages, busyPages])
                    let file = output.appendingPathComponent(service.executable + ".order")
                    try Data((order.names.joined(separator: "\n") + "\n").utf8).write(to: file)
                    rows.append(.init(executable: service.executable, idlePages: idlePages.count, busyPages: busyPages.count,
                                      symbols: order.names.count, symbolBytes: order.bytes, file: file.path))
                }
                return LinkOrderReport(readAheadOff: readAhead.wasTurnedOff, rows: rows)
            }
        }
        try report.print(json: false)
    }

    /// llvm-nm from the Swift toolchain (on PATH, or beside `swift`).
    static func llvmNM() throws -> String {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for directory in directories {
            let candidate = directory + "/llvm-nm"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw BenchmarkError("llvm-nm is not on PATH (it comes with the Swift toolchain, in its usr/bin)")
    }
}

/// What `link-order` found and wrote.
struct LinkOrderReport: BenchmarkReport, Sendable {
    struct Row: Encodable, Sendable {
        let executable: String
        let idlePages: Int
        let busyPages: Int
        let symbols: Int
        let symbolBytes: UInt64
        let file: String
    }

    let readAheadOff: Bool
    let rows: [Row]

    func table() -> String {
        var lines = ["pages of each release binary resident after start and idle, and after the load scenario (\(ResidentPages.pageSize) B pages)"]
        for row in rows {
            lines.append("\(row.executable): \(row.idlePages) idle, \(row.busyPages) busy; \(row.symbols) symbols "
                         + "(\(row.symbolBytes / 1024) KiB) written to \(row.file)")
        }
        if !readAheadOff {
            lines.append("read-ahead could not be turned off (not root?): the order also holds what was read ahead around what was used")
        }
        lines.append("deploy/release-build links each service again with its order")
        return lines.joined(separator: "\n")
    }
}

/// Sets a block device's read-ahead to 0 while it lives, when allowed.
final class ReadAheadOff: Sendable {
    private let file: String?
    private let saved: String?

    init(for path: URL) {
        let file = FootprintBenchmark.readAheadFile(of: path)
        let saved = file.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
        if let file, saved != nil, (try? "0".write(toFile: file, atomically: false, encoding: .utf8)) != nil {
            (self.file, self.saved) = (file, saved)
        } else {
            (self.file, self.saved) = (nil, nil)
        }
    }

    var wasTurnedOff: Bool { file != nil }

    func restore() {
        guard let file, let saved else { return }
        try? saved.write(toFile: file, atomically: false, encoding: .utf8)
    }
}

/// An executable's defined symbols with their addresses and sizes.
struct SymbolTable: Sendable {
    struct Symbol: Sendable {
        let address: UInt64
        let size: UInt64
        let name: String
    }

    let symbols: [Symbol]
    /// Whether the executable holds ICU's data (Foundation's full build links it).
    let hasICUData: Bool

    init(executable: String, nm: String) async throws {
        let listing = try await ToolRun.run([nm, "--defined-only", "--numeric-sort", "--print-size", executable])
        var symbols: [Symbol] = []
        var hasICUData = false
        for line in listing.split(separator: "\n") {
            if line.hasSuffix("_dat"), line.contains(" icudt") { hasICUData = true }
            // address size type name; code only (t, T, and W, weak, which here is code):
            // ordering the data too saves little (about 0.1 MiB) for twice the file.
            let fields = line.split(separator: " ", maxSplits: 3)
            guard fields.count == 4, ["t", "T", "W"].contains(fields[2]),
                  let address = UInt64(fields[0], radix: 16), let size = UInt64(fields[1], radix: 16) else { continue }
            symbols.append(Symbol(address: address, size: size, name: String(fields[3])))
        }
        self.symbols = symbols
        self.hasICUData = hasICUData
    }

    /// The names of the symbols on `phases`' pages: those of the first phase, in address
    /// order, then those the next adds, and so on; and their total size.
    func order(touching phases: [Set<UInt64>]) -> (names: [String], bytes: UInt64) {
        var seen = Set<String>()
        var names: [String] = []
        var bytes: UInt64 = 0
        for pages in phases {
            for symbol in symbols where !seen.contains(symbol.name) {
                let first = symbol.address / ResidentPages.pageSize
                let last = (symbol.address + max(symbol.size, 1) - 1) / ResidentPages.pageSize
                guard (first...last).contains(where: pages.contains) else { continue }
                seen.insert(symbol.name)
                names.append(symbol.name)
                bytes += symbol.size
            }
        }
        return (names, bytes)
    }
}
