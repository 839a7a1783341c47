import EarshotTestHarness
import Foundation
import Synchronization
import Testing

/// What a failed scenario leaves behind: the box's journal of the units it involves, from
/// the scenario's start to its end, in `DIR/failed/NAME.journal` (`DIR` the box's
/// directory), where `deploy/earshot-dev test-system` prints it and keeps it.
///
/// Applied to a suite, it covers each of its tests; a test counts as failed when it
/// records an issue or throws.
struct ScenarioJournal: SuiteTrait, TestTrait, TestScoping {
    /// The box's units every scenario involves: the services, the helper, the system-wide
    /// PipeWire and its session manager, the bus, and what the scenario started itself.
    static let units = ["earshot-*", "pipewire.service", "pipewire.socket", "wireplumber.service", "dbus.service",
                        "earshot-box-*", "user@*.service"]

    var isRecursive: Bool { true }

    /// Issues recorded while one test runs.
    private final class Issues: Sendable {
        let count = Atomic<Int>(0)
    }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil, BoxScenario.isBooted else { return try await function() }
        let box = BoxScenario.box
        let since = try await box.run("date +%s.%N").trimmingCharacters(in: .whitespacesAndNewlines)
        let issues = Issues()
        let counter = IssueHandlingTrait.compactMapIssues { issue in
            issues.count.add(1, ordering: .relaxed)
            return issue
        }
        do {
            try await counter.provideScope(for: test, testCase: testCase, performing: function)
        } catch {
            issues.count.add(1, ordering: .relaxed)
            await Self.keep(test, since: since)
            throw error
        }
        if issues.count.load(ordering: .relaxed) > 0 { await Self.keep(test, since: since) }
    }

    /// Writes the journal of `units` since `since` (seconds since the epoch, the box's clock)
    /// into the box's directory, named after `test`.
    static func keep(_ test: Test, since: String) async {
        let box = BoxScenario.box
        let directory = box.directory.appendingPathComponent("failed")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let name = test.name.replacingOccurrences(of: "()", with: "").filter { $0.isLetter || $0.isNumber }
        let selection = units.map { "-u '\($0)'" }.joined(separator: " ")
        let journal = (try? await box.attempt("journalctl --no-pager -o short-precise --since @\(since) \(selection)"))
        let text = "scenario \(test.name) (\(test.sourceLocation.fileName):\(test.sourceLocation.line)), journal since @\(since):\n"
            + (journal?.output ?? "") + (journal?.errors ?? "")
        try? text.write(to: directory.appendingPathComponent(name + ".journal"), atomically: true, encoding: .utf8)
    }
}

extension Trait where Self == ScenarioJournal {
    /// Keeps the box's journal of a scenario that fails (see `ScenarioJournal`).
    static var journalOnFailure: Self { ScenarioJournal() }
}
