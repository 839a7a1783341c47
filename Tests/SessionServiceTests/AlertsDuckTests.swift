import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

private typealias Alerts = AlertsContract.Manager

/// The alert service with the session service on the same bus: while an alert speaks, its
/// `playback` + `duckOthers` claim ducks other audio, and only while it speaks.
@Suite struct AlertsDuckTests {
    @Test func speechDucksOtherAudio() async throws {
        try await SessionFixture.with { session in
            let alerts = try await ServiceProcess("earshot-alerts", arguments: ["--output-device", "null", "--output-pace", "realtime"],
                                                  bus: session.bus, busName: AlertsContract.busName)
            defer { alerts.stop() }
            let music = try await session.bus.connect()
            defer { music.close() }
            let playing = try await session.activate("playback", on: music).path
            let changes = try await session.client.subscribe(MatchRule(sender: SessionFixture.busName,
                                                                       interface: "org.freedesktop.DBus.Properties",
                                                                       member: "PropertiesChanged", path: playing))
            let completions = try await session.client.subscribe(MatchRule(sender: AlertsContract.busName,
                                                                           interface: AlertsContract.Alert.interface.name,
                                                                           member: AlertsContract.Alert.completed.name))
            _ = try await AlertsProxy(connection: session.client).startSpeaking([SpeechChunk(kind: .text, text: "Turn left in two hundred metres")])
            let ducked = try #require(await changes.next(timeout: .seconds(10)))
            #expect(ducked.body[1].stringKeyedValue?[Activation.ducked]?.boolValue == true)
            #expect(await completions.next(timeout: .seconds(15)) != nil)
            let restored = try #require(await changes.next(timeout: .seconds(5)))
            #expect(restored.body[1].stringKeyedValue?[Activation.ducked]?.boolValue == false)
            await alerts.shutdown()
        }
    }
}
