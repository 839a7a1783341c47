import EarshotTestHarness
import Foundation
import Testing

/// The head-unit commands docs/deployment.md gives work as written, run in the box.
@Suite(.serialized, .enabled(if: BoxScenario.isBooted, "runs inside deploy/earshot-dev test-system"), .journalOnFailure)
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

    /// The audio-focus walk-through of docs/walkthroughs.md for a head unit, as `app` on the
    /// head unit's PipeWire and system bus: the radio the session shows not ducked, ducked
    /// while `earshot session activate --duck-others` holds, and not ducked after; and at the
    /// speakers (measured as root meanwhile) at 0.3 of its level while ducked.
    @Test func theFocusWalkThroughRunsAsWritten() async throws {
        let box = BoxScenario.box
        let commands = try Self.block(in: "walkthroughs.md", after: "box runs these commands as written")
        #expect(commands.contains("earshot session activate --system --duck-others"))
        #expect(!commands.contains("PIPEWIRE_RUNTIME_DIR") && !commands.contains("\npipewire"), "the walk-through starts its own PipeWire")
        // As a person pastes it: each command runs whatever the one before gave.
        let output = try await box.with(commands, as: "app", name: "walkthrough") { unit in
            // While the claim holds (the walk-through's second second), the radio at the speakers.
            try await BoxAudio.waitForStream(role: "Music") { $0.ducked }
            let ducked = try await BoxAudio.speakersLevel(hertz: 440)
            try await BoxAudio.waitForStream(role: "Music") { !$0.ducked }
            try await Task.sleep(for: .milliseconds(300))
            let full = try await BoxAudio.speakersLevel(hertz: 440)
            #expect(abs(ducked - full - AudioFocusTests.duckDB) <= 1.5, "ducked by \(ducked - full) dB, not \(AudioFocusTests.duckDB)")
            let deadline = ContinuousClock.now + .seconds(60)
            while await unit.isActive(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(250)) }
            return await unit.output()
        }
        let streams = output.split(separator: "\n").filter { $0.hasPrefix("aa{sv}") }
        try #require(streams.count == 3, "the walk-through did not read Streams three times:\n\(output)")
        #expect(streams.allSatisfy { $0.contains("\"Role\" s \"Music\"") }, "\(streams)")
        #expect(streams.map { $0.contains("\"Ducked\" b true") } == [false, true, false], "Ducked before, during, after:\n\(streams)")
    }
}
