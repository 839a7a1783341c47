import EarshotContract
import EarshotTestHarness
import Foundation
import Testing

/// Audio focus on the head unit's PipeWire, heard at the speakers: another user's radio
/// ducked and muted by `app`'s claims, emergencies that nothing silences, and the policy
/// holding through a killed session and a restarted PipeWire.
@Suite(.serialized, .enabled(if: BoxScenario.isBooted, "runs inside deploy/earshot-dev test-system"), .journalOnFailure)
struct AudioFocusTests {
    static let duckDB = 20 * log10(0.3)
    static let alerts = "org.earshot.Alerts1 /org/earshot/Alerts1 org.earshot.Alerts1"
    private typealias Alert = AlertsContract.Alert

    /// The radio's level at the speakers now, after `settle`.
    static func radioLevel(settle: Duration = .milliseconds(300)) async throws -> Double {
        try await Task.sleep(for: settle)
        return try await BoxAudio.speakersLevel(hertz: BoxAudio.radioHertz)
    }

    /// `earshot session activate --duck-others`, held by `app` until Ctrl-C: `other`'s radio
    /// plays at DuckLevel meanwhile, and at its own level after.
    @Test func theRadioDucksWhileAppHoldsAnActivation() async throws {
        let box = BoxScenario.box
        try await BoxAudio.withRadio(as: "other") {
            let full = try await Self.radioLevel()
            #expect(full > -12, "the radio at \(full) dB before")
            try await box.with("exec earshot session activate --system --duck-others", as: "app", name: "duck") { holder in
                try await BoxAudio.waitForStream(role: "Music") { $0.ducked }
                let ducked = try await Self.radioLevel()
                #expect(abs(ducked - full - Self.duckDB) <= 1.5, "ducked by \(ducked - full) dB, not \(Self.duckDB)")
                // other raises its own ducked radio with PipeWire's tools: it stays at DuckLevel.
                let radio = try #require(try await BoxAudio.nodes(role: "Music").first, "no node of other's radio")
                let tried = try await AccessControlTests.tamper(with: radio, as: "other", volume: "1.0", mute: "0")
                let raised = try await Self.radioLevel()
                #expect(abs(raised - full - Self.duckDB) <= 1.5, "other's radio at \(raised - full) dB after raising it, not \(Self.duckDB) (\(tried))")
                let holding = await holder.isActive(), said = await holder.output()
                #expect(holding, "the activation ended by itself: \(said)")
            }
            try await BoxAudio.waitForStream(role: "Music") { !$0.ducked }
            let back = try await Self.radioLevel()
            #expect(abs(back - full) <= 1, "the radio at \(back) dB after, \(full) dB before")
        }
    }

    /// The siren an EMERGENCY alert plays in these scenarios (a FILE chunk in `app`'s home,
    /// opened as `app`): a steady 1 kHz tone, so that its level can be compared.
    static let sirenHertz = 1000

    /// Presents an EMERGENCY alert playing the siren as `app`; its object path.
    static func presentEmergency() async throws -> String {
        try BoxScenario.quoted(try await BoxScenario.busctl("""
            call \(Self.alerts) \(AlertsContract.Manager.presentAlert.name) 'a{sv}' 4 Text s "Emergency vehicle" Priority s EMERGENCY \
            Audio 'a(ss)' 1 FILE /home/app/siren.wav \(AlertsContract.Manager.Keys.outliveOwner.name) b true
            """, as: "app"))
    }

    /// The alert's result once it has ended (at most 40 s).
    static func result(of alert: String) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(40)
        var result = ""
        while ContinuousClock.now < deadline {
            result = try await BoxScenario.property(AlertsContract.busName, alert, Alert.interface.name, Alert.resultCode, as: "app")
            if result != "s \"\"" { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        return result
    }

    /// An EMERGENCY alert over the radio: the radio is muted and the alert heard at its own
    /// level (within 1.5 dB of the same alert played alone); `other` can neither silence nor
    /// lower it, nor bring its radio back over it, with PipeWire's tools; and `other`
    /// claiming audio (non-mixable) neither mutes nor ends it.
    @Test func anEmergencyAlertIsHeardAndNothingSilencesIt() async throws {
        let box = BoxScenario.box
        try await box.run("sox -n -r 48000 -c 1 -b 16 siren.wav synth 14 sine \(Self.sirenHertz) vol 0.5", as: "app")
        // Its own level, alone.
        let lone = try await Self.presentEmergency()
        try await BoxAudio.waitForStream(role: "Emergency") { !$0.muted && !$0.ducked }
        try await Task.sleep(for: .milliseconds(300))
        let alone = try await BoxAudio.speakersLevel(hertz: Self.sirenHertz)
        #expect(alone > -12, "the emergency alone at \(alone) dB")
        #expect(try await Self.result(of: lone) == "s \"SUCCESS\"")
        try await BoxAudio.withRadio(as: "other") {
            let alert = try await Self.presentEmergency()
            try await BoxAudio.waitForStream(role: "Music") { $0.muted }
            try await BoxAudio.waitForStream(role: "Emergency") { !$0.muted && !$0.ducked }
            #expect(try await Self.radioLevel() < -50, "the radio is still heard under the emergency")
            let heard = try await BoxAudio.speakersLevel(hertz: Self.sirenHertz)
            #expect(abs(heard - alone) <= 1.5, "the emergency at \(heard) dB over the radio, \(alone) dB alone")
            // other, with PipeWire's tools: mutes and lowers the emergency, raises its radio.
            let emergency = try #require(try await BoxAudio.nodes(role: "Emergency").first, "no node of the emergency")
            let radio = try #require(try await BoxAudio.nodes(role: "Music").first, "no node of the radio")
            let silenced = try await AccessControlTests.tamper(with: emergency, as: "other")
            let raised = try await AccessControlTests.tamper(with: radio, as: "other", volume: "1.0", mute: "0")
            try await Task.sleep(for: .milliseconds(300))
            let after = try await BoxAudio.speakersLevel(hertz: Self.sirenHertz)
            #expect(abs(after - heard) <= 1, "the emergency at \(after) dB after other's attempts, \(heard) dB before (\(silenced))")
            #expect(try await Self.radioLevel(settle: .zero) < -50, "other's radio is heard over the emergency (\(raised))")
            try await box.with("exec earshot session activate --system", as: "other", name: "solo") { _ in
                try await Task.sleep(for: .milliseconds(700))
                let state = try await BoxScenario.property(AlertsContract.busName, alert, Alert.interface.name, Alert.state, as: "app")
                #expect(state == "s \"presenting\"", "the emergency alert is \(state) after other's claim")
                let stream = try await BoxAudio.waitForStream(role: "Emergency") { _ in true }
                #expect(!stream.muted && !stream.ducked, "other's claim lowered the emergency: \(stream)")
                let claimed = try await BoxAudio.speakersLevel(hertz: Self.sirenHertz)
                #expect(abs(claimed - alone) <= 1.5, "the emergency at \(claimed) dB after other's claim, \(alone) dB alone")
            }
            let result = try await Self.result(of: alert)
            #expect(result == "s \"SUCCESS\"", "the emergency alert ended with \(result)")
            try await BoxAudio.waitForStream(role: "Music") { !$0.muted }
        }
    }

    /// `systemctl kill -s KILL earshot-session` while it ducks the radio: systemd restarts
    /// it (`NRestarts` grows: no other service starts it through the bus meanwhile), and the
    /// radio is back at its level (it shows itself lowered).
    @Test func aKilledSessionIsRestartedAndTheRadioComesBack() async throws {
        let box = BoxScenario.box
        try await BoxAudio.withRadio(as: "other") {
            let full = try await Self.radioLevel()
            try await box.with("exec earshot session activate --system --duck-others", as: "app", name: "duck") { _ in
                try await BoxAudio.waitForStream(role: "Music") { $0.ducked }
                let before = try await box.run("systemctl show -P MainPID earshot-session").trimmingCharacters(in: .whitespacesAndNewlines)
                let restarts = Int(try await box.run("systemctl show -P NRestarts earshot-session")
                    .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
                try await box.run("systemctl kill -s KILL earshot-session")
                // Nothing asks the session anything until systemd has restarted it: a call
                // meanwhile would start it through the bus instead.
                let restarted = try await box.attempt("""
                    for i in $(seq 150); do
                        test "$(systemctl show -P NRestarts earshot-session)" -gt \(restarts) && \
                        test "$(systemctl show -P ActiveState earshot-session)" = active && break
                        sleep 0.1
                    done
                    for p in NRestarts ActiveState MainPID; do systemctl show -P $p earshot-session; done
                    """, timeout: .seconds(30))
                let fields = restarted.output.split(separator: "\n").map(String.init)
                #expect(fields.count == 3 && Int(fields[0]) == restarts + 1 && fields[1] == "active" && fields[2] != before && fields[2] != "0",
                        "NRestarts \(restarts) before the kill; after it, NRestarts, ActiveState and MainPID: \(fields)")
                try await BoxAudio.waitForStream(role: "Music") { !$0.ducked && abs($0.volume - 1) < 0.01 }
                let back = try await Self.radioLevel()
                #expect(abs(back - full) <= 1, "the radio at \(back) dB after the restart, \(full) dB before")
            }
        }
    }

    /// PipeWire restarted under a held duck: the session says MediaServicesReset, and the
    /// radio that comes back is ducked again.
    @Test func aPipeWireRestartIsAMediaServicesResetAndThePolicyHolds() async throws {
        let box = BoxScenario.box
        let full = try await BoxAudio.withRadio(as: "other") { try await Self.radioLevel() }
        try await box.with("exec earshot session watch --system", as: "app", name: "watch") { watch in
            try await box.with("exec earshot session activate --system --duck-others", as: "app", name: "duck") { holder in
                try await Task.sleep(for: .milliseconds(500))
                try await box.run("systemctl restart pipewire")
                try await box.waitUntil("systemctl is-active --quiet wireplumber", timeout: .seconds(15))
                let deadline = ContinuousClock.now + .seconds(15)
                let reset = SessionContract.Manager.mediaServicesReset.name
                while ContinuousClock.now < deadline, !(await watch.output()).contains(reset) {
                    try await Task.sleep(for: .milliseconds(200))
                }
                let watched = await watch.output()
                #expect(watched.contains(reset), "no \(SessionContract.Manager.mediaServicesReset.name): \(watched)")
                try await BoxAudio.withRadio(as: "other") {
                    try await BoxAudio.waitForStream(role: "Music") { $0.ducked }
                    let ducked = try await Self.radioLevel()
                    #expect(abs(ducked - full - Self.duckDB) <= 1.5, "ducked by \(ducked - full) dB after the restart, not \(Self.duckDB)")
                }
                let holding = await holder.isActive()
                #expect(holding, "the activation did not survive PipeWire's restart")
            }
        }
    }
}
