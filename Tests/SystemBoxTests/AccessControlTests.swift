import EarshotContract
import EarshotTestHarness
import Foundation
import Testing

/// What another user of the head unit can do to it with PipeWire's own tools, as `other`
/// (in the group `audio`, like every user of the box): nothing to anybody else's audio,
/// nothing to the focus policy's levels, nothing from the microphone or the speakers.
@Suite(.serialized, .enabled(if: BoxScenario.isBooted, "runs inside deploy/earshot-dev test-system"), .journalOnFailure)
struct AccessControlTests {
    /// What `user` tries on the node `id` with stock tools: mute it, lower it, raise it,
    /// destroy it. Each attempt's outcome, for the messages (whatever they say, the
    /// speakers are the judge).
    static func tamper(with id: Int, as user: String, volume: String = "0.1", mute: String = "1") async throws -> String {
        var said: [String] = []
        for command in ["wpctl set-mute \(id) \(mute)", "wpctl set-volume \(id) \(volume)", "pw-cli destroy \(id)"] {
            let outcome = try await BoxScenario.box.attempt("timeout 5 \(command)", as: user)
            said.append("\(command): \(outcome.status) \(outcome.errors.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        return said.joined(separator: "; ")
    }

    /// `app`'s own stream (a 3 kHz guidance tone): `other` neither mutes, lowers, raises nor
    /// destroys it; the speakers play it as before, within 1 dB.
    @Test func anotherUserCannotTouchAppsStream() async throws {
        let box = BoxScenario.box
        try await box.run("sox -n -r 48000 -c 2 -b 16 guide.wav synth 60 sine 3000 vol 0.5", as: "app")
        try await box.with("exec pw-play --media-role Navigation guide.wav", as: "app", name: "guide") { _ in
            try await BoxAudio.waitForStream(role: "Navigation") { _ in true }
            try await Task.sleep(for: .milliseconds(300))
            let before = try await BoxAudio.speakersLevel(hertz: 3000)
            #expect(before > -12, "app's stream at \(before) dB")
            let id = try #require(try await BoxAudio.nodes(role: "Navigation").first, "no node of app's stream")
            let tried = try await Self.tamper(with: id, as: "other")
            try await Task.sleep(for: .milliseconds(300))
            let after = try await BoxAudio.speakersLevel(hertz: 3000)
            #expect(abs(after - before) <= 1, "app's stream at \(after) dB after other's attempts, \(before) dB before (\(tried))")
            #expect(try await BoxAudio.nodes(role: "Navigation") == [id], "app's stream is gone after other's attempts (\(tried))")
        }
    }

    /// `other` records from the microphone and from the speakers' monitor while the
    /// microphone hears a voice: its capture streams are refused (the recording holds
    /// nothing), while `app`'s pass-thru through Earshot gets the voice sample for sample.
    @Test func anotherUserCannotRecordTheCabin() async throws {
        let box = BoxScenario.box
        try await box.run("rm -f take.wav && sox -n -r 48000 -c 1 -b 16 microphone.wav synth 8 sine 200-2000 vol 0.5", as: "app")
        try await BoxScenario.feedingMicrophone("/home/app/microphone.wav") {
            // Both at once with app's pass-thru: the microphone, and the speakers' monitor.
            async let microphone = box.attempt("rm -f mic.wav; timeout 3 pw-record --rate 48000 --channels 1 mic.wav", as: "other")
            async let monitor = box.attempt("""
                rm -f monitor.wav; timeout 3 pw-record --target speakers -P '{ stream.capture.sink=true }' --rate 48000 --channels 1 monitor.wav
                """, as: "other")
            try await InstalledSystemTests.passThruIntoTheCallersHome()
            let attempts = try await [microphone, monitor]
            for (file, attempt) in zip(["mic.wav", "monitor.wav"], attempts) {
                let samples = (try? BoxScenario.samples(ofWave: box.file("home/other/\(file)"))) ?? []
                let loudest = samples.map { abs(Int($0)) }.max() ?? 0
                #expect(loudest == 0, """
                    other's \(file) holds \(samples.count) samples up to \(loudest) (pw-record: \(attempt.status) \(attempt.errors.suffix(300)))
                    """)
            }
        }
    }

    /// The echo reference (the speakers' monitor offered as a source, `echo-reference.conf`)
    /// hears every user's audio. While `app`'s pass-thru with `EchoCancel` reads it and
    /// the radio plays, `other` neither sees it nor records it (`pw-record` names it): its
    /// recording holds nothing, while root, recording the same way, hears the radio in it.
    /// No user may make it the session's input, and `app`'s pass-thru, cancelling against
    /// it, still gets the microphone's voice.
    @Test func onlyTheCaptureServiceHearsTheEchoReference() async throws {
        let box = BoxScenario.box
        let reference = "earshot.echo-reference"
        try await box.run("rm -f take.wav && sox -n -r 48000 -c 1 -b 16 voice.wav synth 6 sine 300-3000 vol 0.5", as: "app")
        try await BoxAudio.withRadio(as: "app") {
            let seen = try await box.run("pw-cli ls Node", as: "other")
            #expect(!seen.contains(reference), "other sees the echo reference: \(seen.suffix(600))")
            // The session's state is one for all: it is left as it was found (the initial
            // category, no preferred input).
            let chosen = try await box.attempt("""
                earshot session set --system --category soloAmbient --preferred-input earshot_echo_reference
                """, as: "app")
            try await box.run("earshot session set --system --category soloAmbient", as: "app")
            #expect(!chosen.succeeded && chosen.errors.contains("is not a capture input"),
                    "app's echo reference as its input: \(chosen.output) \(chosen.errors)")
            let inputs = try await box.run("earshot session inputs --system", as: "app")
            #expect(!inputs.contains("echo_reference"), "the session offers the echo reference as an input: \(inputs)")
            try await BoxScenario.feedingMicrophone("/home/app/voice.wav") {
                async let theirs = box.attempt("""
                    rm -f reference.wav; timeout 3 pw-record --target \(reference) --rate 48000 --channels 1 reference.wav
                    """, as: "other")
                async let roots = box.attempt("""
                    rm -f /tmp/reference.wav; timeout 3 pw-record --target \(reference) --rate 48000 --channels 1 /tmp/reference.wav
                    """)
                let taken = try await box.run("""
                    earshot capture --system --echo-cancel --no-mute-audio --rate 48000 --max-ms 4000 --no-meter --out /home/app/take.wav
                    """, as: "app")
                #expect(taken.contains("SUCCESS"), "app's pass-thru with \(CaptureContract.Manager.Keys.echoCancel.name): \(taken)")
                let attempts = try await (theirs, roots)
                let other = (try? BoxScenario.samples(ofWave: box.file("home/other/reference.wav"))) ?? []
                #expect(other.map { abs(Int($0)) }.max() ?? 0 == 0, """
                    other's recording of the echo reference holds \(other.count) samples up to \(other.map { abs(Int($0)) }.max() ?? 0) \
                    (pw-record: \(attempts.0.status) \(attempts.0.errors.suffix(300)))
                    """)
                let radio = try await box.run("sox /tmp/reference.wav -n trim 0.5 sinc 11500-12500 stat 2>&1 | sed -n 's/^RMS *amplitude: *//p'")
                let level = Double(radio.trimmingCharacters(in: .whitespacesAndNewlines)).map { $0 > 0 ? 20 * log10($0) : -200 } ?? -200
                #expect(level > -30, "root's recording of the echo reference holds the radio at \(level) dB (pw-record: \(attempts.1.errors.suffix(300)))")
            }
        }
        let take = try BoxScenario.samples(ofWave: box.file("home/app/take.wav"))
        let loudest = take.map { abs(Int($0)) }.max() ?? 0
        #expect(take.count >= 48000 * 3 && loudest > 4000, "app's take: \(take.count) samples up to \(loudest)")
    }

    /// PipeWire's PulseAudio server is not offered on the head unit: a PulseAudio program
    /// (`pactl`) finds no server, so it cannot go around the rules either.
    @Test func noPulseAudioServerIsOffered() async throws {
        let outcome = try await BoxScenario.box.attempt("timeout 5 pactl info", as: "other")
        #expect(!outcome.succeeded, "pactl reached a server: \(outcome.output)")
        let units = try await BoxScenario.box.run("systemctl --global is-enabled pipewire-pulse.socket pipewire-pulse.service 2>&1 || true")
        #expect(!units.contains("enabled"), "pipewire-pulse is enabled for users: \(units)")
    }

    /// A user who logs in (`loginctl enable-linger app`: app's own systemd) gets no PipeWire,
    /// pipewire-pulse or WirePlumber of its own; a radio it plays from its session goes to
    /// the head unit's PipeWire and is ducked by another user's claim like everyone's.
    @Test func aUserWhoLogsInIsDuckedLikeTheRest() async throws {
        let box = BoxScenario.box
        let uid = try await box.run("id -u app").trimmingCharacters(in: .whitespacesAndNewlines)
        try await box.run("loginctl enable-linger app")
        do {
            try await box.waitUntil("systemctl is-active --quiet user@\(uid).service", timeout: .seconds(30))
            try await box.waitUntil("test -S /run/user/\(uid)/bus", timeout: .seconds(10))
            try await box.run("sox -n -r 48000 -c 2 -b 16 radio.wav synth 120 sine \(BoxAudio.radioHertz) vol 0.5", as: "app")
            // From app's own session, as a program its desktop would start.
            try await box.run("""
                XDG_RUNTIME_DIR=/run/user/\(uid) systemd-run --user --quiet --collect --unit=earshot-box-login-radio \
                pw-play --media-role Music /home/app/radio.wav
                """, as: "app")
            try await BoxAudio.waitForStream(role: "Music") { _ in true }
            let own = try await box.run("ps -u app -o comm= | sort -u").split(separator: "\n").map(String.init)
            for daemon in ["pipewire", "pipewire-pulse", "wireplumber"] {
                #expect(!own.contains(daemon), "app's session runs its own \(daemon): \(own)")
            }
            try await Task.sleep(for: .milliseconds(300))
            let full = try await BoxAudio.speakersLevel(hertz: BoxAudio.radioHertz)
            try await box.with("exec earshot session activate --system --duck-others", as: "other", name: "duck") { _ in
                try await BoxAudio.waitForStream(role: "Music") { $0.ducked }
                try await Task.sleep(for: .milliseconds(300))
                let ducked = try await BoxAudio.speakersLevel(hertz: BoxAudio.radioHertz)
                #expect(abs(ducked - full - AudioFocusTests.duckDB) <= 1.5,
                        "the logged-in user's radio ducked by \(ducked - full) dB, not \(AudioFocusTests.duckDB)")
            }
        } catch {
            _ = try? await box.attempt("loginctl disable-linger app; loginctl terminate-user app")
            throw error
        }
        try await box.run("loginctl disable-linger app; loginctl terminate-user app || true")
        try await box.waitUntil("! systemctl is-active --quiet user@\(uid).service", timeout: .seconds(30))
    }
}
