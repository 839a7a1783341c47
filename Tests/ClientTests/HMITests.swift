import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// `earshot hmi` in a real terminal: a detached tmux session, read with capture-pane and
/// driven with send-keys.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux")))
struct HMITests {
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
                let completions = try await fixture.client.subscribe(MatchRule(sender: "org.earshot.Alerts1",
                                                                               interface: "org.earshot.Alerts1.Alert",
                                                                               member: "Completed"))
                let reply = try await fixture.client.call(
                    destination: "org.earshot.Alerts1", path: "/org/earshot/Alerts1", interface: "org.earshot.Alerts1",
                    member: "PresentAlert", [.vardict([
                        "Text": .string("Call from Ann"), "SecondaryText": .string("mobile"),
                        "SoftButtons": .vardicts([["Id": .uint16(7), "Text": .string("Answer"), "SystemAction": .string("STEAL_FOCUS")],
                                                  ["Id": .uint16(9), "Text": .string("Decline")],
                                                  ["Id": .uint16(5), "Text": .string("Later"), "SystemAction": .string("KEEP_CONTEXT")]]),
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
                #expect(completed.body.last?.stringKeyedValue?["PressedButton"] == .uint16(9))
                try await tmux.waitForScreen(["> pressed [2] Decline", "ALERT       none"])

                // A pass-thru with a prompt line; the user cancels it.
                let finished = try await fixture.client.subscribe(MatchRule(sender: "org.earshot.Capture1",
                                                                            interface: "org.earshot.Capture1.PassThru",
                                                                            member: "Finished"))
                let started = try await fixture.client.call(
                    destination: "org.earshot.Capture1", path: "/org/earshot/Capture1", interface: "org.earshot.Capture1",
                    member: "PerformAudioPassThru", [.vardict([
                        "SamplingRate": .uint32(16000), "BitsPerSample": .uint32(16), "AudioType": .string("PCM"),
                        "MaxDuration": .uint32(10000), "DisplayText1": .string("Say something"),
                    ])])
                let passThru = try #require(started.first?.objectPathValue)
                try await tmux.waitForScreen([passThru.rawValue, "recording", "Say something", "16000 Hz 16-bit mono", "[c] cancel"])
                _ = try await tmux.run(["send-keys", "-t", "hmi", "c"])
                let ended = try #require(await finished.next(timeout: .seconds(5)))
                #expect(ended.path == passThru)
                #expect(ended.body.first == .string("ABORTED"))
                #expect(ended.body.last?.stringKeyedValue?["Reason"] == .string("cancel"))
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
