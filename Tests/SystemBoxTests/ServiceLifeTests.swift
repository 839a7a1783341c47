import EarshotContract
import EarshotTestHarness
import Foundation
import Testing

/// The services' lives under systemd: stopped in time, giving back what they changed, and
/// journaled with their fields.
@Suite(.serialized, .enabled(if: BoxScenario.isBooted, "runs inside deploy/earshot-dev test-system"), .journalOnFailure)
struct ServiceLifeTests {
    static let services = ["capture", "alerts", "pieces", "orchestrator", "session"]

    /// Seconds from systemd's `TimeoutStopUSec` text ("10s", "1min 30s").
    static func seconds(_ text: String) -> Double {
        var total = 0.0
        for part in text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ") {
            if part.hasSuffix("min"), let value = Double(part.dropLast(3)) {
                total += value * 60
            } else if part.hasSuffix("ms"), let value = Double(part.dropLast(2)) {
                total += value / 1000
            } else if part.hasSuffix("s"), let value = Double(part.dropLast()) {
                total += value
            }
        }
        return total
    }

    /// `systemctl stop` of each service, the session while it ducks another user's radio:
    /// each ends within its TimeoutStopSec, cleanly, and the radio is back at its level.
    @Test func everyServiceStopsInTimeAndGivesBackWhatItChanged() async throws {
        let box = BoxScenario.box
        for service in Self.services { try await box.run("systemctl start earshot-\(service)") }
        try await BoxAudio.withRadio(as: "other") {
            try await Task.sleep(for: .milliseconds(300))
            let full = try await BoxAudio.speakersLevel(hertz: BoxAudio.radioHertz)
            try await box.with("exec earshot session activate --system --duck-others", as: "app", name: "duck") { _ in
                try await BoxAudio.waitForStream(role: "Music") { $0.ducked }
                for service in Self.services {
                    let unit = "earshot-\(service)"
                    let limit = Self.seconds(try await box.run("systemctl show -P TimeoutStopUSec \(unit)"))
                    #expect(limit > 0 && limit <= 30, "\(unit): TimeoutStopSec \(limit) s")
                    let started = ContinuousClock.now
                    try await box.run("systemctl stop \(unit)")
                    let took = started.duration(to: .now)
                    #expect(took < .seconds(limit), "\(unit) took \(took) to stop, its limit is \(limit) s")
                    let result = try await box.run("systemctl show -P Result,ExecMainStatus \(unit)")
                    #expect(result.split(separator: "\n").sorted() == ["0", "success"], "\(unit) stopped with \(result)")
                }
            }
            // The session gave the radio its level back as it stopped.
            try await Task.sleep(for: .milliseconds(300))
            let back = try await BoxAudio.speakersLevel(hertz: BoxAudio.radioHertz)
            #expect(abs(back - full) <= 1, "the radio at \(back) dB after the session stopped, \(full) dB before")
        }
    }

    /// Each service's lines are in the journal under its unit, each with its fields:
    /// where in the code it was said, and what it was about (`EARSHOT_…`).
    @Test func eachServiceJournalsItsLinesWithTheirFields() async throws {
        let box = BoxScenario.box
        for service in Self.services { try await box.run("systemctl restart earshot-\(service)") }
        try await BoxScenario.busctl("""
            call org.earshot.Capture1 /org/earshot/Capture1 org.earshot.Capture1 \(CaptureContract.Manager.performAudioPassThru.name) 'a{sv}' 5 \
            \(CaptureContract.Manager.Keys.samplingRate.name) u 16000 \(CaptureContract.Manager.Keys.bitsPerSample.name) u 16 \(CaptureContract.Manager.Keys.audioType.name) s PCM \(CaptureContract.Manager.Keys.maxDuration.name) u 300 \(CaptureContract.Manager.Keys.outliveOwner.name) b true
            """, as: "app")
        try await box.waitUntil("journalctl --no-pager -u earshot-capture -o verbose EARSHOT_RESULT=SUCCESS | grep -q EARSHOT_PASSTHRU=",
                                timeout: .seconds(10))
        for service in Self.services {
            let name = try #require(EarshotContract.services.first(where: { $0.executable == "earshot-\(service)" })?.busName)
            let entry = try await box.run("journalctl --no-pager -u earshot-\(service) -o verbose EARSHOT_BUS_NAME=\(name) | tail -40")
            for field in ["MESSAGE=ready: \(name) on the system bus", "PRIORITY=6", "SYSLOG_IDENTIFIER=earshot-\(service)",
                          "CODE_FUNC=", "CODE_FILE=", "EARSHOT_UNIQUE_NAME=:1."] {
                #expect(entry.contains(field), "earshot-\(service)'s ready line has no \(field):\n\(entry)")
            }
        }
    }
}
