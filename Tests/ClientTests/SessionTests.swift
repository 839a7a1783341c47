import ContractCore
import EarshotContract
import EarshotDBus
import Foundation
import Testing

@Suite struct SessionTests {
    private typealias Session = SessionContract.Manager
    private typealias InputKeys = SessionContract.Manager.InputKeys
    private typealias RouteKeys = SessionContract.Manager.RouteKeys

    @Test func inputsSetGet() async throws {
        try await ClientFixture.with(["earshot-session"], stereoMicrophone: true) { fixture in
            let inputs = try await fixture.earshot(["session", "inputs", "--json"])
            #expect(inputs.status == 0, "\(inputs)")
            let list = try #require(try inputs.json() as? [[String: Any]])
            #expect(Set(list.compactMap { $0[InputKeys.name.name] as? String }) == ["mic", "stereo_mic"])
            #expect(list.first { $0[InputKeys.name.name] as? String == "stereo_mic" }?[InputKeys.channels.name] as? [Int] == [2])
            let table = try await fixture.earshot(["session", "inputs"])
            #expect(table.lines.first?.hasPrefix("NAME") == true && table.lines.count == 3, "\(table)")

            let set = try await fixture.earshot(["session", "set", "--category", "play-and-record", "--option", "speaker",
                                                 "--preferred-input", "stereo_mic", "--polar-pattern", "stereo",
                                                 "--sample-rate", "44100", "--json"])
            #expect(set.status == 0, "\(set)")
            let state = try set.object()
            #expect(state[Session.category.name] as? String == "playAndRecord")
            #expect(state[Session.options.name] as? [String] == ["defaultToSpeaker"])
            #expect(state[Session.channels.name] as? Int == 2)
            #expect(state[Session.sampleRate.name] as? Int == 44100)
            #expect((state[Session.route.name] as? [String: Any])?[RouteKeys.input.name] as? String == "stereo_mic")

            let get = try await fixture.earshot(["session", "get"])
            #expect(get.status == 0, "\(get)")
            #expect(get.lines.contains { $0.hasPrefix("Category ") && $0.hasSuffix("  playAndRecord") }, "\(get)")
            #expect(get.lines.contains { $0.hasPrefix("Route.Input ") && $0.hasSuffix("  stereo_mic") }, "\(get)")

            let refused = try await fixture.earshot(["session", "set", "--category", "playback", "--option", "speaker"])
            #expect(refused.status == 1)
            #expect(refused.stderr.hasPrefix("earshot: \(EarshotErrorName.incompatibleOption.name): Options: "), "\(refused)")
        }
    }

    @Test func watchPrintsSignalsUntilCount() async throws {
        try await ClientFixture.with(["earshot-session"], stereoMicrophone: true) { fixture in
            _ = try await fixture.client.call(destination: SessionContract.busName, path: "/org/earshot/Session1",
                                              interface: Session.interface.name, member: Session.setDesiredState.name,
                                              [.vardict([Session.Keys.category.name: .string("record"),
                                                         Session.Keys.preferredInput.name: .string("mic")])])
            let watch = try fixture.start(["session", "watch", "--count", "1", "--json"])
            try await watch.waitForStderr("watching org.earshot.Session1")
            let set = try await fixture.earshot(["session", "set", "--category", "record", "--preferred-input", "stereo_mic"])
            #expect(set.status == 0, "\(set)")
            let result = try await watch.wait()
            #expect(result.status == 0, "\(result)")
            let signal = try result.object()
            #expect(signal["signal"] as? String == Session.routeChanged.name, "\(result)")
            #expect(signal["reason"] as? String == "Override", "\(result)")
            #expect((signal["previousRoute"] as? [String: Any])?[RouteKeys.input.name] as? String == "mic", "\(result)")
        }
    }

    @Test func activateHoldsAClaimUntilItsTimeIsUp() async throws {
        try await ClientFixture.with(["earshot-session"], stereoMicrophone: true) { fixture in
            let held = try await fixture.earshot(["session", "activate", "--category", "playback", "--duck-others", "--seconds", "0.5",
                                                  "--json"])
            #expect(held.status == 0, "\(held)")
            let path = try #require(try held.object()["activation"] as? String)
            #expect(path.hasPrefix("/org/earshot/Session1/Activation/"), "\(held)")
            #expect(held.stderr.contains("holding \(path)"), "\(held)")
            let refused = try await fixture.earshot(["session", "activate", "--category", "karaoke", "--seconds", "0.5"])
            #expect(refused.status == 1 && refused.stderr.hasPrefix("earshot: \(EarshotErrorName.invalidCategory.name)"), "\(refused)")
        }
    }
}
