import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

private typealias StreamKeys = SessionContract.Manager.StreamKeys
private typealias Alerts = AlertsContract.Manager
private typealias AlertKeys = AlertsContract.Manager.Keys
private typealias Alert = AlertsContract.Alert

extension MixerPolicyTests {
    /// Alerts of every kind, an interruption, devices coming and going, and the kept state
    /// applied again, on the real PipeWire of `MixerPolicyTests` (one test at a time, as
    /// they share a machine's two cores with the sound they measure).
    @Suite struct FocusHeard {
        struct Kind: Sendable, CustomTestStringConvertible {
            let priority: String
            let role: String
            let mutes: Bool
            var testDescription: String { priority }
        }

        /// VOICECOM and EMERGENCY silence other audio, the rest duck it; each alert's own
        /// stream carries its role and is left alone.
        static let kinds = [Kind(priority: "NORMAL", role: "Notification", mutes: false),
                            Kind(priority: "NAVIGATION", role: "Navigation", mutes: false),
                            Kind(priority: "VOICECOM", role: "Communication", mutes: true),
                            Kind(priority: "EMERGENCY", role: "Emergency", mutes: true)]

        static func startAlerts(_ rig: Rig) async throws -> ServiceProcess {
            try await ServiceProcess("earshot-alerts", arguments: ["--output-device", "pipewire"],
                                     bus: rig.session.bus, busName: AlertsContract.busName, environment: rig.pipewire.environment)
        }

        static func present(_ rig: Rig, priority: String, speech: String) async throws -> ObjectPath {
            let reply = try await rig.session.client.call(
                destination: AlertsContract.busName, path: "/org/earshot/Alerts1", interface: Alerts.interface.name,
                member: Alerts.presentAlert.name, [.vardict([
                    AlertKeys.text.name: .string("Attention"), AlertKeys.priority.name: .string(priority),
                    AlertKeys.audio.name: .array(.structure([.string, .string]), [.structure([.string("TEXT"), .string(speech)])]),
                ])])
            return try #require(reply.first?.objectPathValue)
        }

        @Test(arguments: kinds)
        func anAlertDucksOrSilencesTheRadioByItsPriorityAndIsHeard(kind: Kind) async throws {
            try await MixerPolicyTests.with { rig in
                let full = try await rig.radioLevel()
                let alerts = try await Self.startAlerts(rig)
                defer { alerts.stop() }
                let completions = try await rig.session.client.subscribe(MatchRule(sender: AlertsContract.busName, interface: Alert.interface.name,
                                                                                   member: Alert.completed.name))
                let alert = try await Self.present(rig, priority: kind.priority,
                                                   speech: "Turn left in two hundred metres, then keep right at the fork.")
                _ = try await rig.waitForRadio { $0[kind.mutes ? StreamKeys.muted : StreamKeys.ducked]?.boolValue == true }
                let heard = try await rig.pipewire.listen(seconds: 0.8)
                let radio = PipeWireTestSystem.toneLevel(heard, hertz: MixerPolicyTests.radioHertz)
                if kind.mutes {
                    #expect(radio < -60, "\(kind.priority): the radio at \(radio) dB")
                } else {
                    #expect(abs((radio - full) - MixerPolicyTests.duckDB) <= 1.5, "\(kind.priority): the radio went \(radio - full) dB")
                }
                #expect(PipeWireTestSystem.rmsLevel(heard) > -45, "\(kind.priority): the alert's speech was not heard")
                let own = try await rig.streams().first { $0[StreamKeys.role]?.stringValue == kind.role }
                #expect(own?[StreamKeys.ducked] == .boolean(false) && own?[StreamKeys.muted] == .boolean(false), "\(String(describing: own))")
                var completed = false
                while !completed, let signal = await completions.next(timeout: .seconds(20)) { completed = signal.path == alert }
                #expect(completed)
                _ = try await rig.waitForRadio { $0[StreamKeys.ducked]?.boolValue == false && $0[StreamKeys.muted]?.boolValue == false }
                #expect(abs(try await rig.radioLevel() - full) <= 1, "\(kind.priority): the radio did not come back")
            }
        }

        /// Another client's non-mixable activation ends a VOICECOM alert (non-mixable too:
        /// `interrupted`, ABORTED), and its speech stops: with the radio silenced by that
        /// activation, nothing is heard. (A NAVIGATION alert mixes, ducking: it plays on.)
        @Test func anAlertInterruptedByAnotherClientEndsAndFallsSilent() async throws {
            try await MixerPolicyTests.with { rig in
                let alerts = try await Self.startAlerts(rig)
                defer { alerts.stop() }
                let completions = try await rig.session.client.subscribe(MatchRule(sender: AlertsContract.busName, interface: Alert.interface.name,
                                                                                   member: Alert.completed.name))
                let alert = try await Self.present(rig, priority: "VOICECOM",
                                                   speech: "In three hundred metres, at the roundabout, take the second exit, then continue for five kilometres.")
                _ = try await rig.waitForRadio { $0[StreamKeys.muted]?.boolValue == true }
                #expect(PipeWireTestSystem.rmsLevel(try await rig.pipewire.listen(seconds: 0.4)) > -45)
                let phone = try await rig.session.bus.connect()
                defer { phone.close() }
                _ = try await rig.session.activate("playback", on: phone)
                var ended: DBusMessage?
                while ended == nil, let signal = await completions.next(timeout: .seconds(10)) {
                    if signal.path == alert { ended = signal }
                }
                let completion = try #require(ended)
                #expect(completion.body[1].stringValue == "ABORTED")
                #expect(completion.body[2].stringKeyedValue?[Alert.CompletionKeys.reason]?.stringValue == "interrupted")
                _ = try await rig.waitForRadio { $0[StreamKeys.muted]?.boolValue == true }
                try await Task.sleep(for: .milliseconds(200))
                let after = PipeWireTestSystem.rmsLevel(try await rig.pipewire.listen(seconds: 0.6))
                #expect(after < -60, "still heard after the interruption: \(after) dBFS")
            }
        }

        /// Sinks and sources made and removed on PipeWire are RouteChanged with
        /// NewDeviceAvailable and OldDeviceUnavailable.
        @Test func sinksAndSourcesComingAndGoingAreRouteChanges() async throws {
            try await MixerPolicyTests.with { rig in
                let routes = try await rig.session.subscribe(Session.routeChanged)
                for (name, mediaClass) in [("headphones", "Audio/Sink"), ("headset-mic", "Audio/Source/Virtual")] {
                    _ = try await rig.pipewire.tool(["pw-cli", "create-node", "adapter",
                                                     "{ factory.name=support.null-audio-sink node.name=\(name) media.class=\(mediaClass) object.linger=true }"])
                    let arrived = try #require(await routes.next(timeout: .seconds(5)), "\(name): no \(SessionContract.Manager.routeChanged.name)")
                    #expect(arrived.body.first?.stringValue == "NewDeviceAvailable", "\(name): \(arrived.body)")
                    let listed = try await rig.pipewire.tool(["pw-cli", "ls", "Node"])
                    let id = try #require(Self.nodeID(named: name, in: listed), "\(name) not in:\n\(listed)")
                    _ = try await rig.pipewire.tool(["pw-cli", "destroy", String(id)])
                    let left = try #require(await routes.next(timeout: .seconds(5)), "\(name): no \(SessionContract.Manager.routeChanged.name) when it went")
                    #expect(left.body.first?.stringValue == "OldDeviceUnavailable", "\(name): \(left.body)")
                }
            }
        }

        /// The id `pw-cli ls Node` gives the node named `name`.
        static func nodeID(named name: String, in listing: String) -> UInt32? {
            var id: UInt32?
            for line in listing.split(separator: "\n") {
                let text = line.trimmingCharacters(in: .whitespaces)
                if text.hasPrefix("id "), let number = text.dropFirst(3).split(separator: ",").first { id = UInt32(number) }
                if text.contains("node.name = \"\(name)\"") { return id }
            }
            return nil
        }

        /// With KeepEnforced, a PipeWire restart (a media services reset) applies the kept
        /// state again: Reapplied says so.
        @Test func aPipeWireRestartReappliesTheKeptState() async throws {
            try await MixerPolicyTests.with { rig in
                try await rig.session.setDesiredState(DesiredSessionState(category: "playback"))
                try await rig.session.proxy.write(.keepEnforced, true)
                let reapplied = try await rig.session.subscribe(Session.reapplied)
                await rig.pipewire.killDaemons()
                try await rig.pipewire.startDaemons()
                let signal = try #require(await reapplied.next(timeout: .seconds(10)), "no Reapplied after the restart")
                #expect(signal.body == [.string("mediaServicesReset"), .boolean(true), .string("")])
            }
        }
    }
}
