import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

@Suite struct ActivationTests {
    static let interruption = MatchRule(sender: SessionFixture.busName, interface: SessionFixture.interface,
                                        member: Session.interruption.name)

    @Test func interruptionsReachOnlyTheActivationsOwner() async throws {
        try await SessionFixture.with { session in
            let music = try await session.bus.connect()
            let recorder = try await session.bus.connect()
            let bystander = try await session.bus.connect()
            defer {
                music.close()
                recorder.close()
                bystander.close()
            }
            let toMusic = try await music.subscribe(Self.interruption)
            let toRecorder = try await recorder.subscribe(Self.interruption)
            let toBystander = try await bystander.subscribe(Self.interruption)

            let playing = try await session.activate("playback", on: music)
            let recording = try await session.activate("record", on: recorder)
            let began = try #require(await toMusic.next(timeout: .seconds(5)))
            #expect(began.destination == music.uniqueName)
            #expect(began.body.first?.stringValue == "began")
            let options = try #require(began.body[1].stringKeyedValue)
            #expect(options[Session.InterruptionKeys.activation]?.objectPathValue == playing.path)
            #expect(options[Session.InterruptionKeys.by]?.objectPathValue == recording.path)
            #expect(try await playing.read(.state) == .interrupted)

            // A mixable claim interrupts nobody; a ducking one ducks the playing one.
            let chime = try await session.activate("playback", options: ["duck"], on: bystander)
            #expect(try await recording.read(.ducked) == true)
            #expect(try await chime.read(.options) == ["mixWithOthers", "duckOthers"])
            try await chime.deactivate()
            #expect(try await recording.read(.ducked) == false)

            // Only the owner may end an activation.
            await expectDBusError(EarshotErrorName.disallowed.name) { try await session.deactivate(recording, on: bystander) }

            try await recording.deactivate()
            let ended = try #require(await toMusic.next(timeout: .seconds(5)))
            #expect(ended.body.first?.stringValue == "ended")
            #expect(ended.body[1].stringKeyedValue?[Session.InterruptionKeys.shouldResume]?.boolValue == true)
            #expect(try await recording.read(.state) == .deactivated)
            #expect(try await playing.read(.state) == .active)

            // Nobody else heard any of it.
            #expect(await toRecorder.next(timeout: .milliseconds(300)) == nil)
            #expect(await toBystander.next(timeout: .milliseconds(100)) == nil)
        }
    }

    @Test func anOwnerLeavingEndsItsActivation() async throws {
        try await SessionFixture.with { session in
            let music = try await session.bus.connect()
            defer { music.close() }
            let toMusic = try await music.subscribe(Self.interruption)
            _ = try await session.activate("soloAmbient", on: music)
            let caller = try await session.bus.connect()
            // Read from the fixture's connection: the caller's goes away.
            let call = session.proxy.activation(at: try await session.activate("playAndRecord", mode: "voiceChat", on: caller).path)
            #expect(await toMusic.next(timeout: .seconds(5))?.body.first?.stringValue == "began")
            caller.close()
            let ended = try #require(await toMusic.next(timeout: .seconds(5)))
            #expect(ended.body.first?.stringValue == "ended")
            #expect(try await call.read(.state) == .deactivated)
            // It leaves the bus after the linger time.
            try await Task.sleep(for: .seconds(3))
            await expectDBusError("org.freedesktop.DBus.Error.UnknownObject") { _ = try await call.read(.state) }
        }
    }

    @Test func theSessionsOwnActivationResumesAfterAnInterruption() async throws {
        try await SessionFixture.with { session in
            try await session.setDesiredState(DesiredSessionState(category: "playback", active: true))
            #expect(try await session.proxy.read(.active) == true)
            let interruptions = try await session.client.subscribe(Self.interruption)
            let reapplied = try await session.subscribe(Session.reapplied)
            let caller = try await session.bus.connect()
            defer { caller.close() }
            let claim = try await session.activate("record", on: caller)
            let began = try #require(await interruptions.next(timeout: .seconds(5)))
            #expect(began.body.first?.stringValue == "began")
            #expect(began.body[1].stringKeyedValue?[Session.InterruptionKeys.activation]?.objectPathValue == SessionFixture.path)
            #expect(try await session.proxy.read(.active) == false)
            try await claim.deactivate()
            #expect(await interruptions.next(timeout: .seconds(5))?.body.first?.stringValue == "ended")
            #expect(try #require(await reapplied.next(timeout: .seconds(5))).body == [.string("interruption"), .boolean(true), .string("")])
            #expect(try await session.proxy.read(.active) == true)
        }
    }

    /// Sent raw: the client refuses all three before sending.
    @Test func activationRequestsAreChecked() async throws {
        try await SessionFixture.with { session in
            await expectDBusError(EarshotErrorName.invalidCategory.name) {
                try await session.activate(raw: [SessionKeys.category.name: .string("x")])
            }
            await expectDBusError(EarshotErrorName.incompatibleOption.name) {
                try await session.activate(raw: [SessionKeys.category.name: .string("record"), SessionKeys.options.name: .strings(["duck"])])
            }
            await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") {
                try await session.activate(raw: [SessionKeys.category.name: .string("record"), SessionKeys.active.name: .boolean(true)])
            }
        }
    }

    @Test func oneClientHoldsAtMost32Activations() async throws {
        try await SessionFixture.with { session in
            var activations: [SessionActivation] = []
            for _ in 0 ..< 32 { activations.append(try await session.activate("ambient", on: session.client)) }
            await expectDBusError("org.freedesktop.DBus.Error.LimitsExceeded") { _ = try await session.activate("ambient", on: session.client) }
            // Another client is not held back by the first, and a deactivation makes room.
            let other = try await session.bus.connect()
            defer { other.close() }
            _ = try await session.activate("ambient", on: other)
            try await activations[0].deactivate()
            _ = try await session.activate("ambient", on: session.client)
        }
    }
}

