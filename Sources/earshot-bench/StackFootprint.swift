import EarshotTestHarness
import Foundation

/// `earshot-bench footprint --stack`: the five services at once, idle, as a head unit runs
/// them: what they cost together in proportional memory (PSS: a page mapped by n processes
/// counts 1/n in each, so the shared libraries and the binary's pages both map count once
/// in the sum) and in anonymous memory, which nothing shares.
struct StackFootprint: Sendable {
    let idle: Duration

    struct Row: Encodable, Sendable {
        let executable: String
        let rssKiB: UInt64
        let pssKiB: UInt64
        let pssAnonKiB: UInt64
        let pssFileKiB: UInt64
    }

    func run() async throws -> StackFootprintResults {
        try await ServiceStack.with([]) { stack in
            var pids: [(String, Int32)] = []
            for service in ServiceStack.services {
                progress("\(service.executable): start")
                pids.append((service.executable, try await stack.launch(service.executable).pid))
            }
            try await Task.sleep(for: idle)
            var rows: [Row] = []
            for (executable, pid) in pids {
                let fields = try Self.rollup(pid)
                rows.append(Row(executable: executable, rssKiB: fields["Rss"] ?? 0, pssKiB: fields["Pss"] ?? 0,
                                pssAnonKiB: fields["Pss_Anon"] ?? 0, pssFileKiB: fields["Pss_File"] ?? 0))
            }
            return StackFootprintResults(idleSeconds: Double(idle.components.seconds) + Double(idle.components.attoseconds) / 1e18,
                                         runtime: try await Self.swiftRuntime(of: builtService(ServiceStack.services[0].executable)),
                                         services: rows)
        }
    }

    /// /proc/PID/smaps_rollup's fields in KiB.
    static func rollup(_ pid: Int32) throws -> [String: UInt64] {
        let text = try String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8)
        var fields: [String: UInt64] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count >= 2, parts[0].hasSuffix(":"), let value = UInt64(parts[1]) else { continue }
            fields[String(parts[0].dropLast())] = value
        }
        return fields
    }

    /// "static" when the executable carries the Swift runtime, "shared" when it names libswiftCore.so.
    static func swiftRuntime(of executable: String) async throws -> String {
        try await ToolRun.run(["readelf", "-d", executable]).contains("[libswiftCore.so]") ? "shared" : "static"
    }
}

struct StackFootprintResults: BenchmarkReport, Sendable {
    let idleSeconds: Double
    /// How the services measured carry the Swift runtime.
    let runtime: String
    let services: [StackFootprint.Row]

    var totalPssKiB: UInt64 { services.reduce(0) { $0 + $1.pssKiB } }
    var totalAnonKiB: UInt64 { services.reduce(0) { $0 + $1.pssAnonKiB } }

    func table() -> String {
        func mib(_ kib: UInt64) -> String { TableFormat.fixed(Double(kib) / 1024, 1) }
        var lines = ["the five services at once on one private bus, \(TableFormat.fixed(idleSeconds, 1)) s after the last started; "
                     + "Swift runtime \(runtime); memory in MiB (smaps_rollup)"]
        let widths = [-22, 8, 8, 10, 10]
        lines.append(TableFormat.row(["service", "VmRSS", "PSS", "PSS anon", "PSS file"], widths: widths))
        for row in services {
            lines.append(TableFormat.row([row.executable, mib(row.rssKiB), mib(row.pssKiB), mib(row.pssAnonKiB), mib(row.pssFileKiB)],
                                         widths: widths))
        }
        lines.append("the stack: PSS \(mib(totalPssKiB)) MiB, anonymous \(mib(totalAnonKiB)) MiB")
        return lines.joined(separator: "\n")
    }
}
