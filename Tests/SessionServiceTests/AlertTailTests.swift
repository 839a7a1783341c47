import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc
import Testing

private typealias Alerts = AlertsContract.Manager

/// A prompt is heard to its end on a real PipeWire: its alert ends when the device has
/// played the last frame, not when the end was predicted. The prompt ends in a 300 ms
/// marker tone; the speakers' monitor must carry all of it.
@Suite(.serialized) struct AlertTailTests {
    static let markerHertz = 3000.0
    static let markerSeconds = 0.3

    /// How many milliseconds of the marker the speakers played, in 5 ms windows (a window
    /// counts when the marker in it is within 14 dB of its level as written).
    static func markerHeard(outputArguments: [String], stallMs: Int? = nil) async throws -> Int {
        let pipewire = try await PipeWireTestSystem.start()
        do {
            let heard = try await SessionFixture.with(arguments: ["--mixer", "pipewire"], environment: pipewire.environment) { session in
                let alerts = try await ServiceProcess("earshot-alerts", arguments: ["--output-device", "pipewire"] + outputArguments,
                                                      bus: session.bus, busName: AlertsContract.busName, environment: pipewire.environment)
                defer { alerts.stop() }
                let marker = try pipewire.tone(hertz: markerHertz, amplitude: 0.5, seconds: markerSeconds, channels: 1)
                let completed = try await session.client.subscribe(MatchRule(sender: AlertsContract.busName,
                                                                             interface: AlertsContract.Alert.interface.name,
                                                                             member: AlertsContract.Alert.completed.name))
                async let recording = pipewire.listen(seconds: 6)
                try await Task.sleep(for: .milliseconds(500))
                // Speak: a prompt without display, which ends when its audio does.
                _ = try await session.client.call(destination: AlertsContract.busName, path: "/org/earshot/Alerts1",
                                                  interface: Alerts.interface.name, member: Alerts.speak.name, [
                                                      .array(.structure([.string, .string]), [
                                                          .structure([.string("TEXT"), .string("Turn right, then turn right again.")]),
                                                          .structure([.string("FILE"), .string(marker.path)]),
                                                      ]), .vardict([:]),
                                                  ])
                if let stallMs {
                    // A loaded CPU: the service gets no time for a while mid-prompt, and
                    // the device runs dry (an underrun) before the rest of the prompt.
                    try await Task.sleep(for: .milliseconds(400))
                    alerts.signal(SIGSTOP)
                    try await Task.sleep(for: .milliseconds(stallMs))
                    alerts.signal(SIGCONT)
                }
                let end = await completed.next(timeout: .seconds(10))
                #expect(end != nil, "the alert completed; alerts' log:\n\(alerts.logText.suffix(2000))")
                let samples = try await recording
                let window = 240
                let level = 20 * log10(0.5)
                return stride(from: 0, to: samples.count - window, by: window).filter { start in
                    PipeWireTestSystem.toneLevel(samples[start..<(start + window)], hertz: markerHertz, skipping: 0) > level - 14
                }.count * 5
            }
            await pipewire.stop()
            return heard
        } catch {
            let logs = pipewire.log("pipewire.log") + pipewire.log("wireplumber.log")
            await pipewire.stop()
            throw HarnessError("\(error)\n--- PipeWire:\n\(logs.suffix(1500))")
        }
    }

    @Test func aPromptOnAHighLatencyOutputIsHeardToItsEnd() async throws {
        let heard = try await Self.markerHeard(outputArguments: ["--output-buffer-ms", "1000"])
        #expect(heard >= Int(Self.markerSeconds * 1000) - 15, "\(heard) ms of the prompt's last 300 ms were heard")
        #expect(heard <= Int(Self.markerSeconds * 1000) + 15, "\(heard) ms: more than the marker")
    }

    @Test func aPromptIsHeardToItsEndAfterAnUnderrun() async throws {
        let heard = try await Self.markerHeard(outputArguments: [], stallMs: 500)
        #expect(heard >= Int(Self.markerSeconds * 1000) - 15, "\(heard) ms of the prompt's last 300 ms were heard")
    }
}
