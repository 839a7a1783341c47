import EarshotContract
import EarshotTestHarness
import Foundation
import Testing

/// Audio focus on the head unit's PipeWire, heard at the speakers: another user's radio
/// ducked and muted by `app`'s claims, emergencies that nothing silences, and the policy
/// holding through a killed session and a restarted PipeWire.
@Suite(.serialized, .enabled(if: BoxScenario.isBooted, "runs inside deploy/earshot-dev test-system"))
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
                let holding = await holder.isActive(), said = await holder.output()
                #expect(holding, "the activation ended by itself: \(said)")
            }
            try await BoxAudio.waitForStream(role: "Music") { !$0.ducked }
            let back = try await Self.radioLevel()
            #expect(abs(back - full) <= 1, "the radio at \(back) dB after, \(full) dB before")
        }
    }

    /// An EMERGENCY alert over the radio: the radio is muted, the alert heard at its level,
    /// and `other` claiming audio (non-mixable) meanwhile neither mutes nor ends it.
    @Test func anEmergencyAlertIsHeardAndNothingSilencesIt() async throws {
        let box = BoxScenario.box
        try await BoxAudio.withRadio(as: "other") {
            let speech = "Warning. An emergency vehicle is approaching from behind. Please move to the side of the road "
                + "and stop. I repeat: an emergency vehicle is approaching from behind."
            let alert = try BoxScenario.quoted(try await BoxScenario.busctl("""
                call \(Self.alerts) PresentAlert 'a{sv}' 4 Text s "Emergency vehicle" Priority s EMERGENCY \
                Audio 'a(ss)' 1 TEXT "\(speech)" OutliveOwner b true
                """, as: "app"))
            try await BoxAudio.waitForStream(role: "Music") { $0.muted }
            try await BoxAudio.waitForStream(role: "Emergency") { !$0.muted && !$0.ducked }
            #expect(try await Self.radioLevel() < -50, "the radio is still heard under the emergency")
            #expect(try await BoxAudio.speakersLevel(hertz: nil) > -35, "the emergency is not heard")
            try await box.with("exec earshot session activate --system", as: "other", name: "solo") { _ in
                try await Task.sleep(for: .milliseconds(700))
                let state = try await BoxScenario.property(AlertsContract.busName, alert, Alert.interface.name, Alert.state, as: "app")
                #expect(state == "s \"presenting\"", "the emergency alert is \(state) after other's claim")
                let emergency = try await BoxAudio.waitForStream(role: "Emergency") { _ in true }
                #expect(!emergency.muted && !emergency.ducked, "other's claim lowered the emergency: \(emergency)")
                #expect(try await BoxAudio.speakersLevel(hertz: nil) > -35, "the emergency is not heard after other's claim")
            }
            let deadline = ContinuousClock.now + .seconds(40)
            var result = ""
            while ContinuousClock.now < deadline {
                result = try await BoxScenario.property(AlertsContract.busName, alert, Alert.interface.name, Alert.resultCode, as: "app")
                if result != "s \"\"" { break }
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(result == "s \"SUCCESS\"", "the emergency alert ended with \(result)")
            try await BoxAudio.waitForStream(role: "Music") { !$0.muted }
        }
    }

    /// `systemctl kill -s KILL earshot-session` while it ducks the radio: it is started
    /// again, and the radio is back at its level (it shows itself lowered). Either systemd's
    /// restart or a bus activation brings it back: once a new process was running with
    /// `NRestarts` still 0 (capture and alerts follow the session and may call it first).
    @Test func aKilledSessionIsRestartedAndTheRadioComesBack() async throws {
        let box = BoxScenario.box
        try await BoxAudio.withRadio(as: "other") {
            let full = try await Self.radioLevel()
            try await box.with("exec earshot session activate --system --duck-others", as: "app", name: "duck") { _ in
                try await BoxAudio.waitForStream(role: "Music") { $0.ducked }
                let before = try await box.run("systemctl show -P MainPID earshot-session")
                try await box.run("systemctl kill -s KILL earshot-session")
                let restarted = try await box.waitUntil("""
                    test "$(systemctl show -P ActiveState earshot-session)" = active && \
                    test "$(systemctl show -P MainPID earshot-session)" != \(before.trimmingCharacters(in: .whitespacesAndNewlines)) && \
                    systemctl show -P MainPID earshot-session
                    """, timeout: .seconds(15))
                #expect((Int(restarted.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 0, "no new earshot-session: \(restarted)")
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
                #expect(watched.contains(reset), "no MediaServicesReset: \(watched)")
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
