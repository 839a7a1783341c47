import EarshotContract
import EarshotDBus
import Foundation
import Testing

@Suite struct StatusTests {
    private static let capture = CaptureContract.busName
    private static let alerts = AlertsContract.busName
    private static let session = SessionContract.busName
    private static let pieces = PiecesContract.busName
    private static let orchestrator = OrchestratorContract.busName

    @Test func statusShowsWhatRunsAndWhatDoesNot() async throws {
        try await ClientFixture.with(["earshot-alerts", "earshot-pieces"]) { fixture in
            let text = try await fixture.earshot(["status"])
            #expect(text.status == 3, "\(text)")
            #expect(text.lines.count == 5, "\(text)")
            let pieces = try #require(text.lines.first { $0.hasPrefix("org.earshot.Pieces1 ") })
            #expect(pieces.contains(" running ") && pieces.contains("Count 0"), "\(pieces)")
            let alerts = try #require(text.lines.first { $0.hasPrefix("org.earshot.Alerts1 ") })
            #expect(alerts.contains("Current /") && alerts.contains("\(AlertsContract.Manager.queueLength.name) 0"), "\(alerts)")
            for absent in [Self.capture, Self.session, Self.orchestrator] {
                #expect(text.lines.contains { $0.hasPrefix(absent + " ") && $0.hasSuffix("not running") }, "\(text)")
            }

            let json = try await fixture.earshot(["status", "--json"])
            #expect(json.status == 3)
            let services = try #require(try json.object()["services"] as? [[String: Any]])
            #expect(services.map { $0["name"] as? String } == [Self.capture, Self.alerts, Self.session, Self.pieces, Self.orchestrator])
            let byName = Dictionary(uniqueKeysWithValues: services.map { ($0["name"] as? String ?? "", $0) })
            #expect(byName[Self.pieces]?["running"] as? Bool == true)
            #expect((byName[Self.pieces]?["owner"] as? String)?.hasPrefix(":") == true)
            #expect((byName[Self.pieces]?["state"] as? [String: Any])?[PiecesContract.Manager.count.name] as? Int == 0)
            #expect(byName[Self.capture]?["running"] as? Bool == false)
            #expect(byName[Self.capture]?["owner"] is NSNull)
        }
    }

    @Test func aCommandForAnAbsentServiceSaysSo() async throws {
        try await ClientFixture.with([]) { fixture in
            let result = try await fixture.earshot(["session", "get"])
            #expect(result.status == 3)
            #expect(result.stderr == "earshot: org.earshot.Session1 is not running\n", "\(result)")
            #expect(result.stdout.isEmpty)
            let pieces = try await fixture.earshot(["pieces", "list", "--json"])
            #expect(pieces.status == 3)
            #expect(pieces.stderr == "earshot: org.earshot.Pieces1 is not running\n", "\(pieces)")
        }
    }

    @Test func usageErrorsExitWithTwo() async throws {
        try await ClientFixture.with([]) { fixture in
            let result = try await fixture.earshot(["capture", "--bits", "12", "--out", fixture.file("x.wav").path])
            #expect(result.status == 2, "\(result)")
            #expect(result.stderr.contains("--bits must be 8 or 16"))
            #expect(!FileManager.default.fileExists(atPath: fixture.file("x.wav").path))
        }
    }
}
