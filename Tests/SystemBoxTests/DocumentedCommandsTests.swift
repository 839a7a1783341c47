import EarshotTestHarness
import Foundation
import Testing

/// The head-unit commands docs/deployment.md gives work as written, run in the box.
@Suite(.serialized, .enabled(if: BoxScenario.isBooted, "runs inside deploy/earshot-dev test-system"))
struct DocumentedCommandsTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The first `sh` block after `marker` (a heading, or words of the paragraph before
    /// the block) in a document of docs/.
    static func block(in document: String, after marker: String) throws -> String {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("docs").appendingPathComponent(document), encoding: .utf8)
        guard let section = text.range(of: marker),
              let start = text.range(of: "```sh\n", range: section.upperBound..<text.endIndex),
              let end = text.range(of: "\n```", range: start.upperBound..<text.endIndex) else {
            throw HarnessError("no sh block after '\(marker)' in docs/\(document)")
        }
        return String(text[start.upperBound..<end.lowerBound])
    }

    @Test func theHeadUnitCommandsRunAsWritten() async throws {
        let commands = try Self.block(in: "deployment.md", after: "\n### Trying it on the head unit\n")
        #expect(commands.contains("earshot record"))
        let outcome = try await BoxScenario.box.attempt("set -e\n" + commands, as: "app", timeout: .seconds(90))
        #expect(outcome.succeeded, "docs/deployment.md's commands failed in the box:\n\(outcome.errors)\n\(outcome.output)")
        #expect(outcome.output.contains("Box take"), "the recorded piece is not listed:\n\(outcome.output)")
    }

    /// The audio-focus walk-through of docs/walkthroughs.md, as `app`: its own PipeWire and
    /// session bus (the walk-through is for a machine without them, so the head unit's
    /// PipeWire is not named to it), its own earshot-session, a radio, and the claim held by
    /// `earshot session activate`: the radio measured at 0.3 of its level while ducked.
    @Test func theFocusWalkThroughRunsAsWritten() async throws {
        let box = BoxScenario.box
        let commands = try Self.block(in: "walkthroughs.md", after: "box runs these commands as written")
        #expect(commands.contains("earshot session activate --duck-others"))
        // As a person pastes it: each command runs whatever the one before gave (`timeout 1
        // pw-record` ends with 124); the levels at the end say whether it worked.
        let output = try await box.with("unset PIPEWIRE_RUNTIME_DIR\n" + commands, as: "app", name: "walkthrough") { unit in
            let deadline = ContinuousClock.now + .seconds(60)
            while await unit.isActive(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(250)) }
            return await unit.output()
        }
        let levels = output.split(separator: "\n").filter { $0.contains("RMS") && $0.contains("amplitude") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
        try #require(levels.count == 2, "the walk-through did not measure both levels:\n\(output)")
        #expect(abs(levels[0] - 0.35) < 0.03, "the radio at \(levels[0]) before, not 0.35:\n\(output)")
        #expect(abs(levels[1] / levels[0] - 0.3) < 0.04, "ducked to \(levels[1] / levels[0]) of its level, not 0.3:\n\(output)")
    }
}
