import EarshotTestHarness
import Foundation

/// What the box's PipeWire says of the cycles its graph missed. When a client of a driver
/// (the microphone's, capture's, or the driver itself) has not finished a cycle by the next
/// one, the daemon logs "client too slow!" with the quantum, at the info level, at most once
/// in 2 s for each driver. The daemon logs warnings only, so `watch` raises its level while a
/// scenario runs and `stop` puts it back.
struct MissedCycles {
    /// One report: the daemon's line, and the quantum (in samples) its graph ran at.
    struct Report {
        let line: String
        let quantum: Int
    }

    /// The box's clock when the watch began, in seconds.
    private let since: Double
    private let level: String

    /// From now on: the daemon at the info level, its reports read by `reports`.
    static func watch() async throws -> MissedCycles {
        let box = BoxScenario.box
        let settings = try await box.run("pw-metadata -n settings 0 log.level")
        let level = settings.firstMatch(of: /value:'(\d+)'/).map { String($0.1) } ?? "2"
        try await box.run("pw-metadata -n settings 0 log.level 3 >/dev/null")
        let now = try await box.run("date +%s.%N").trimmingCharacters(in: .whitespacesAndNewlines)
        return MissedCycles(since: Double(now) ?? 0, level: level)
    }

    /// The cycles the graph missed since the watch began, and in the 2 s before it (a report
    /// then stands for a cycle missed afterwards, which the daemon does not log again so soon).
    func reports() async throws -> [Report] {
        let lines = try await BoxScenario.box.run("""
            journalctl -u pipewire --since @\(String(format: "%.3f", since - 2)) -o cat --no-pager | grep 'client too slow' || true
            """)
        return lines.split(separator: "\n").compactMap { line in
            line.firstMatch(of: /rate:(\d+)\/\d+/).flatMap { Int($0.1) }.map { Report(line: String(line), quantum: $0) }
        }
    }

    /// The daemon's log level as it was.
    func stop() async throws {
        try await BoxScenario.box.run("pw-metadata -n settings 0 log.level \(level) >/dev/null")
    }
}
