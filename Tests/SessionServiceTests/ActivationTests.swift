import ContractCore
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

            let playing = try await session.activate([SessionKeys.category.name: .string("playback")], on: music)
            let recording = try await session.activate([SessionKeys.category.name: .string("record")], on: recorder)
            let began = try #require(await toMusic.next(timeout: .seconds(5)))
            #expect(began.destination == music.uniqueName)
            #expect(began.body.first?.stringValue == "began")
            let options = try #require(began.body[1].stringKeyedValue)
            #expect(options[Session.InterruptionKeys.activation]?.objectPathValue == playing)
            #expect(options[Session.InterruptionKeys.by]?.objectPathValue == recording)
            #expect(try await session.property(Activation.state, path: playing, interface: SessionFixture.activationInterface)?.stringValue
                == "interrupted")

            // A mixable claim interrupts nobody; a ducking one ducks the playing one.
            let chime = try await session.activate([SessionKeys.category.name: .string("playback"), SessionKeys.options.name: .strings(["duck"])],
                                                   on: bystander)
            #expect(try await session.property(Activation.ducked, path: recording, interface: SessionFixture.activationInterface)?.boolValue
                == true)
            #expect(try await session.property(Activation.options, path: chime, interface: SessionFixture.activationInterface)?.stringArrayValue
                == ["mixWithOthers", "duckOthers"])
            try await session.deactivate(chime, on: bystander)
            #expect(try await session.property(Activation.ducked, path: recording, interface: SessionFixture.activationInterface)?.boolValue
                == false)

            // Only the owner may end an activation.
            await expectDBusError(EarshotErrorName.disallowed.name) { try await session.deactivate(recording, on: bystander) }

            try await session.deactivate(recording, on: recorder)
            let ended = try #require(await toMusic.next(timeout: .seconds(5)))
            #expect(ended.body.first?.stringValue == "ended")
            #expect(ended.body[1].stringKeyedValue?[Session.InterruptionKeys.shouldResume]?.boolValue == true)
            #expect(try await session.property(Activation.state, path: recording, interface: SessionFixture.activationInterface)?.stringValue
                == "deactivated")
            #expect(try await session.property(Activation.state, path: playing, interface: SessionFixture.activationInterface)?.stringValue
                == "active")

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
            _ = try await session.activate([SessionKeys.category.name: .string("soloAmbient")], on: music)
            let caller = try await session.bus.connect()
            let call = try await session.activate([SessionKeys.category.name: .string("playAndRecord"), SessionKeys.mode.name: .string("voiceChat")],
                                                  on: caller)
            #expect(await toMusic.next(timeout: .seconds(5))?.body.first?.stringValue == "began")
            caller.close()
            let ended = try #require(await toMusic.next(timeout: .seconds(5)))
            #expect(ended.body.first?.stringValue == "ended")
            #expect(try await session.property(Activation.state, path: call, interface: SessionFixture.activationInterface)?.stringValue
                == "deactivated")
            // It leaves the bus after the linger time.
            try await Task.sleep(for: .seconds(3))
            await expectDBusError("org.freedesktop.DBus.Error.UnknownObject") {
                _ = try await session.property(Activation.state, path: call, interface: SessionFixture.activationInterface)
            }
        }
    }

    @Test func theSessionsOwnActivationResumesAfterAnInterruption() async throws {
        try await SessionFixture.with { session in
            try await session.setDesiredState([SessionKeys.category.name: .string("playback"), SessionKeys.active.name: .boolean(true)])
            #expect(try await session.property(Session.active)?.boolValue == true)
            let interruptions = try await session.client.subscribe(Self.interruption)
            let reapplied = try await session.subscribe(Session.reapplied)
            let caller = try await session.bus.connect()
            defer { caller.close() }
            let claim = try await session.activate([SessionKeys.category.name: .string("record")], on: caller)
            let began = try #require(await interruptions.next(timeout: .seconds(5)))
            #expect(began.body.first?.stringValue == "began")
            #expect(began.body[1].stringKeyedValue?[Session.InterruptionKeys.activation]?.objectPathValue == SessionFixture.path)
            #expect(try await session.property(Session.active)?.boolValue == false)
            try await session.deactivate(claim, on: caller)
            #expect(await interruptions.next(timeout: .seconds(5))?.body.first?.stringValue == "ended")
            #expect(try #require(await reapplied.next(timeout: .seconds(5))).body == [.string("interruption"), .boolean(true), .string("")])
            #expect(try await session.property(Session.active)?.boolValue == true)
        }
    }

    @Test func activationRequestsAreChecked() async throws {
        try await SessionFixture.with { session in
            await expectDBusError(EarshotErrorName.invalidCategory.name) {
                _ = try await session.activate([SessionKeys.category.name: .string("x")], on: session.client)
            }
            await expectDBusError(EarshotErrorName.incompatibleOption.name) {
                _ = try await session.activate([SessionKeys.category.name: .string("record"), SessionKeys.options.name: .strings(["duck"])],
                                               on: session.client)
            }
            await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") {
                _ = try await session.activate([SessionKeys.category.name: .string("record"), SessionKeys.active.name: .boolean(true)],
                                               on: session.client)
            }
        }
    }

    @Test func oneClientHoldsAtMost32Activations() async throws {
        try await SessionFixture.with { session in
            let mixing: [String: DBusValue] = [SessionKeys.category.name: .string("ambient")]
            var paths: [ObjectPath] = []
            for _ in 0 ..< 32 { paths.append(try await session.activate(mixing, on: session.client)) }
            await expectDBusError("org.freedesktop.DBus.Error.LimitsExceeded") { _ = try await session.activate(mixing, on: session.client) }
            // Another client is not held back by the first, and a deactivation makes room.
            let other = try await session.bus.connect()
            defer { other.close() }
            _ = try await session.activate(mixing, on: other)
            try await session.deactivate(paths[0], on: session.client)
            _ = try await session.activate(mixing, on: session.client)
        }
    }
}

