import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// `earshot hmi` in a real terminal: a detached tmux session, read with capture-pane and
/// driven with send-keys.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux")))
struct HMITests {
    private typealias Alerts = AlertsContract.Manager
    private typealias Alert = AlertsContract.Alert
    private typealias Button = AlertsContract.Manager.SoftButtonKeys
    private typealias Capture = CaptureContract.Manager
    private typealias PassThru = CaptureContract.PassThru

    /// A tmux server of the test's own (its socket in the bus directory).
    struct Tmux {
        let socket: String

        func run(_ arguments: [String]) async throws -> String {
            try await ToolRun.run(["/usr/bin/tmux", "-S", socket, "-f", "/dev/null"] + arguments, timeout: .seconds(10))
        }

        func screen() async throws -> String { try await run(["capture-pane", "-p", "-t", "hmi"]) }

        func waitForScreen(_ texts: [String], timeout: Duration = .seconds(10)) async throws {
            var last = ""
            do {
                try await eventually("the HMI to show \(texts)", timeout: timeout) {
                    last = try await screen()
                    return texts.allSatisfy(last.contains)
                }
            } catch {
                throw HarnessError("\(error); the screen:\n\(last)")
            }
        }
    }

    @Test func showsAlertAndPassThruAndPressesTheirButtons() async throws {
        try await ClientFixture.with(["earshot-alerts", "earshot-capture"]) { fixture in
            let tmux = Tmux(socket: fixture.file("tmux.sock").path)
            let statusFile = fixture.file("hmi.status").path
            let earshot = ServiceProcess.productsDirectory.appendingPathComponent("earshot").path
            _ = try await tmux.run(["new-session", "-d", "-s", "hmi", "-x", "100", "-y", "30",
                                    "\(earshot) hmi --address '\(fixture.bus.address)'; echo $? > '\(statusFile)'"])
            do {
                try await tmux.waitForScreen(["Earshot HMI", "ALERT       none", "MICROPHONE  idle"])

                // An alert with two buttons; the user presses the second.
                let completions = try await fixture.client.subscribe(MatchRule(sender: AlertsContract.busName,
                                                                               interface: Alert.interface.name,
                                                                               member: Alert.completed.name))
                let reply = try await fixture.client.call(
                    destination: AlertsContract.busName, path: "/org/earshot/Alerts1", interface: Alerts.interface.name,
                    member: Alerts.presentAlert.name, [.vardict([
                        Alerts.Keys.text.name: .string("Call from Ann"), Alerts.Keys.secondaryText.name: .string("mobile"),
                        Alerts.Keys.softButtons.name: .vardicts([
                            [Button.id.name: .uint16(7), Button.text.name: .string("Answer"), Button.systemAction.name: .string("STEAL_FOCUS")],
                            [Button.id.name: .uint16(9), Button.text.name: .string("Decline")],
                            [Button.id.name: .uint16(5), Button.text.name: .string("Later"), Button.systemAction.name: .string("KEEP_CONTEXT")],
                        ]),
                    ])])
                let alert = try #require(reply.first?.objectPathValue)
                try await tmux.waitForScreen([alert.rawValue, "Call from Ann", "mobile", "[1] Answer (→ app)   [2] Decline   [3] Later (stays)"])
                // KEEP_CONTEXT: the alert stays.
                _ = try await tmux.run(["send-keys", "-t", "hmi", "3"])
                try await tmux.waitForScreen(["> pressed [3] Later; the alert stays (KEEP_CONTEXT)", alert.rawValue])
                _ = try await tmux.run(["send-keys", "-t", "hmi", "2"])
                let completed = try #require(await completions.next(timeout: .seconds(5)))
                #expect(completed.path == alert)
                #expect(completed.body.prefix(2) == [.boolean(true), .string("SUCCESS")])
                #expect(completed.body.last?.stringKeyedValue?[Alert.CompletionKeys.pressedButton.name] == .uint16(9))
                try await tmux.waitForScreen(["> pressed [2] Decline", "ALERT       none"])

                // A pass-thru with a prompt line; the user cancels it.
                let finished = try await fixture.client.subscribe(MatchRule(sender: CaptureContract.busName,
                                                                            interface: PassThru.interface.name,
                                                                            member: PassThru.finished.name))
                let started = try await fixture.client.call(
                    destination: CaptureContract.busName, path: "/org/earshot/Capture1", interface: Capture.interface.name,
                    member: Capture.performAudioPassThru.name, [.vardict([
                        Capture.Keys.samplingRate.name: .uint32(16000), Capture.Keys.bitsPerSample.name: .uint32(16),
                        Capture.Keys.audioType.name: .string("PCM"), Capture.Keys.maxDuration.name: .uint32(10000),
                        Capture.Keys.displayText1.name: .string("Say something"),
                    ])])
                let passThru = try #require(started.first?.objectPathValue)
                try await tmux.waitForScreen([passThru.rawValue, "recording", "Say something", "16000 Hz 16-bit mono", "[c] cancel"])
                _ = try await tmux.run(["send-keys", "-t", "hmi", "c"])
                let ended = try #require(await finished.next(timeout: .seconds(5)))
                #expect(ended.path == passThru)
                #expect(ended.body.first == .string("ABORTED"))
                #expect(ended.body.last?.stringKeyedValue?[PassThru.FinishedKeys.reason.name] == .string("cancel"))
                try await tmux.waitForScreen(["MICROPHONE  idle"])

                // q quits with status 0 (and the session, whose only window it was, ends).
                _ = try await tmux.run(["send-keys", "-t", "hmi", "q"])
                try await eventually("the HMI to exit") {
                    ((try? String(contentsOfFile: statusFile, encoding: .utf8)) ?? "").hasSuffix("\n")
                }
                #expect(try String(contentsOfFile: statusFile, encoding: .utf8) == "0\n")
            } catch {
                _ = try? await tmux.run(["kill-server"])
                throw error
            }
            _ = try? await tmux.run(["kill-server"])
        }
    }
}
