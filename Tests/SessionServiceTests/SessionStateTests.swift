import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

@Suite struct SessionStateTests {
    @Test func setStateReadsBackActualValues() async throws {
        try await SessionFixture.with { session in
            let changes = try await session.client.subscribe(MatchRule(sender: SessionFixture.busName,
                                                                       interface: "org.freedesktop.DBus.Properties",
                                                                       member: "PropertiesChanged"))
            // Sent raw: other spellings, and a rate as UInt32, which the client does not send.
            try await session.setDesiredState(raw: [
                SessionKeys.category.name: .string("play-and-record"), SessionKeys.mode.name: .string("VOICE-CHAT"),
                SessionKeys.options.name: .strings(["speaker", "duck"]), SessionKeys.sampleRate.name: .uint32(44100),
                SessionKeys.ioBufferDuration.name: .double(0.0231),
                SessionKeys.preferredInput.name: .string("stereo_mic"), SessionKeys.polarPattern.name: .string("Stereo"),
                SessionKeys.inputOrientation.name: .string("landscape-left"), SessionKeys.active.name: .boolean(true),
                SessionKeys.dataSourceName.name: .string("default"),
            ])
            let state = try await session.state()
            #expect(state.category == "playAndRecord")
            #expect(state.mode == "voiceChat")
            #expect(state.options == ["mixWithOthers", "duckOthers", "defaultToSpeaker"])
            #expect(state.sampleRate == 44100)
            // The period the device granted: whole frames near the hint, read back.
            let duration = state.ioBufferDuration
            let frames = duration * 44100
            #expect(abs(frames - frames.rounded()) < 1e-6, "\(duration) s is not whole frames")
            #expect(abs(duration - 0.0231) < 2.0 / 44100, "\(duration)")
            #expect(state.channels == 2)
            #expect(state.values.string(Session.polarPattern) == "stereo")
            #expect(state.values.string(Session.inputOrientation) == "landscapeLeft")
            #expect(state.values.string(Session.preferredInput) == "stereo_mic")
            #expect(state.values.string(Session.dataSourceName) == "default")
            #expect(state.active)
            #expect(state.values[Session.keepEnforced]?.boolValue == true)
            #expect(state.input == "stereo_mic")

            // The same values as properties, announced by PropertiesChanged.
            #expect(try await session.proxy.read(.category) == "playAndRecord")
            #expect(try await session.proxy.read(.channels) == 2)
            let desired = try await session.proxy.read(.desiredState)
            #expect(desired[SessionKeys.category]?.stringValue == "playAndRecord")
            #expect(desired[SessionKeys.options]?.stringArrayValue == ["duckOthers", "defaultToSpeaker"])
            #expect(desired[SessionKeys.sampleRate]?.doubleValue == 44100)
            let announced = try #require(await changes.next(timeout: .seconds(5)))
            let changed = try #require(announced.body[1].stringKeyedValue)
            #expect(changed[Session.category]?.stringValue == "playAndRecord")
            #expect(changed[Session.route] != nil)

            // The mono microphone at 16 kHz: one channel, the rate in force follows.
            try await session.setDesiredState(DesiredSessionState(category: "record", sampleRate: 16000, preferredInput: "mono_mic"))
            let mono = try await session.state()
            #expect(mono.channels == 1)
            #expect(mono.sampleRate == 16000)
            #expect(mono.values.string(Session.polarPattern) == "omnidirectional")
            #expect(mono.active)  // an absent key leaves its value alone
        }
    }

    @Test func listInputsProbesEachMicrophone() async throws {
        try await SessionFixture.with { session in
            let byName = Dictionary(uniqueKeysWithValues: try await session.inputs().map { ($0.name, $0.values) })
            let mono = try #require(byName["mono_mic"])
            let stereo = try #require(byName["stereo_mic"])
            #expect(mono[Session.InputKeys.channels]?.arrayValue?.compactMap(\.uint32Value) == [1])
            #expect(stereo[Session.InputKeys.channels]?.arrayValue?.compactMap(\.uint32Value) == [2])
            #expect(mono[Session.InputKeys.polarPatterns]?.stringArrayValue == ["cardioid", "omnidirectional", "subcardioid"])
            #expect(stereo[Session.InputKeys.polarPatterns]?.stringArrayValue == ["stereo", "cardioid", "omnidirectional", "subcardioid"])
            #expect(mono[Session.InputKeys.dataSources]?.stringArrayValue == ["default"])
            #expect(mono[Session.InputKeys.sampleRates]?.arrayValue?.compactMap(\.uint32Value).contains(48000) == true)
            #expect(byName["null"] == nil)
        }
    }

    @Test func pipeWirePCMsAreNotProbedWithoutADaemon() async throws {
        // A PCM of PipeWire's ALSA plugin, and a runtime directory with no daemon's socket:
        // the scan leaves it out without opening it, so no PipeWire library stays behind.
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-no-pipewire-\(getpid())")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: runtime) }
        try await SessionFixture.with(environment: ["XDG_RUNTIME_DIR": runtime.path, "PIPEWIRE_RUNTIME_DIR": runtime.path]) { session in
            var devices = SessionFixture.devices(of: session.bus, extra: [])
            devices.pipeWire("pw_mic")
            try devices.write()
            let names = try await session.inputs().map(\.name)
            #expect(names.contains("mono_mic") && !names.contains("pw_mic"))
            let mapped = try session.service.mappedFiles()
            #expect(!mapped.contains { $0.contains("libpipewire") || $0.contains("libspa") }, "\(mapped)")
        }
    }

    @Test func badRequestsGetNamedErrorsAndChangeNothing() async throws {
        try await SessionFixture.with { session in
            try await session.setDesiredState(DesiredSessionState(category: "playback"))
            let before = try await session.proxy.read(.desiredState)
            let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
            let cases: [(String, [String: DBusValue], String)] = [
                (EarshotErrorName.invalidCategory.name, [SessionKeys.category.name: .string("loud")], SessionKeys.category.name),
                (EarshotErrorName.invalidMode.name, [SessionKeys.category.name: .string("record"), SessionKeys.mode.name: .string("karaoke")],
                 SessionKeys.mode.name),
                (EarshotErrorName.invalidOption.name,
                 [SessionKeys.category.name: .string("playback"), SessionKeys.options.name: .strings(["duck", "louder"])], "Options[1]"),
                (EarshotErrorName.invalidOrientation.name,
                 [SessionKeys.category.name: .string("record"), SessionKeys.inputOrientation.name: .string("sideways")],
                 SessionKeys.inputOrientation.name),
                (EarshotErrorName.invalidPolarPattern.name,
                 [SessionKeys.category.name: .string("record"), SessionKeys.polarPattern.name: .string("figure8")], SessionKeys.polarPattern.name),
                (EarshotErrorName.incompatibleOption.name,
                 [SessionKeys.category.name: .string("playback"), SessionKeys.options.name: .strings(["speaker"])], "defaultToSpeaker"),
                (EarshotErrorName.incompatibleOption.name,
                 [SessionKeys.category.name: .string("ambient"), SessionKeys.mode.name: .string("voiceChat")], "voiceChat"),
                (invalidArgs, [SessionKeys.mode.name: .string("default")], SessionKeys.category.name),
                (invalidArgs, [SessionKeys.category.name: .uint32(1)], SessionKeys.category.name),
                (invalidArgs, [SessionKeys.category.name: .string("record"), "Loudness": .double(3)], "Loudness"),
                (invalidArgs, [SessionKeys.category.name: .string("record"), SessionKeys.sampleRate.name: .double(10)], SessionKeys.sampleRate.name),
                (invalidArgs, [SessionKeys.category.name: .string("record"), SessionKeys.ioBufferDuration.name: .double(5)],
                 SessionKeys.ioBufferDuration.name),
                (invalidArgs, [SessionKeys.category.name: .string("record"), SessionKeys.options.name: .string("duck")], SessionKeys.options.name),
            ]
            // Sent raw: the client refuses them before sending.
            for (name, request, field) in cases {
                let error = await expectDBusError(name) { try await session.setDesiredState(raw: request) }
                #expect(error?.message.contains(field) == true, "\(error?.message ?? "")")
            }
            #expect(try await session.proxy.read(.desiredState) == before, "a refused request changed the desired state")
            #expect(try await session.state().category == "playback")

            // Refusals by the devices: the first failing step is the reply.
            let device: [(String, DesiredSessionState)] = [
                (EarshotErrorName.invalidInputType.name, DesiredSessionState(category: "record", preferredInput: "no_such_mic")),
                (EarshotErrorName.dataSourceNotFound.name,
                 DesiredSessionState(category: "record", preferredInput: "mono_mic", dataSourceName: "front")),
                (EarshotErrorName.polarPatternNotSupported.name,
                 DesiredSessionState(category: "record", preferredInput: "mono_mic", polarPattern: "stereo")),
            ]
            for (name, request) in device {
                await expectDBusError(name) { try await session.setDesiredState(request) }
            }
            // With no sound card, the built-in microphone does not exist.
            if (try? FileManager.default.contentsOfDirectory(atPath: "/dev/snd"))?.contains(where: { $0.hasPrefix("pcmC") && $0.hasSuffix("c") }) != true {
                await expectDBusError(EarshotErrorName.noInputDevice.name) {
                    try await session.setDesiredState(DesiredSessionState(category: "record", preferredInput: "builtInMic"))
                }
            }
            // A refused step leaves what came before it applied: the category is record.
            #expect(try await session.state().category == "record")
        }
    }

    @Test func stateFileSurvivesARestart() async throws {
        try await SessionFixture.with { session in
            try await session.setDesiredState(DesiredSessionState(category: "record", sampleRate: 22050, preferredInput: "stereo_mic",
                                                                  polarPattern: "stereo"))
            try await session.proxy.write(.keepEnforced, false)
            // A level outside 0..1 is refused as the property declares (InvalidData), and changes nothing.
            await expectDBusError(EarshotErrorName.invalidData.name) { try await session.proxy.write(.duckLevel, 1.5) }
            #expect(try await session.proxy.read(.duckLevel) == 0.3)
            let desired = try await session.proxy.read(.desiredState)
            let state = try await session.state()
            #expect(FileManager.default.fileExists(atPath: session.stateFile.path))

            session.service.signal(SIGTERM)
            #expect(await session.service.waitForExit() == 0)
            let restarted = try await ServiceProcess("earshot-session", arguments: ["--state-file", session.stateFile.path],
                                                     bus: session.bus, busName: SessionFixture.busName,
                                                     environment: SessionFixture.devices(of: session.bus, extra: []).environment)
            defer { restarted.stop() }
            #expect(try await session.proxy.read(.desiredState) == desired)
            let after = try await session.state()
            #expect(after.values == state.values.merging([Session.keepEnforced.name: .boolean(false)]) { _, new in new })
            #expect(after.channels == 2)
            await restarted.shutdown()
        }
    }

    @Test func aCorruptStateFileStartsFromDefaults() async throws {
        try await SessionFixture.with { session in
            try await session.setDesiredState(DesiredSessionState(category: "playback"))
            session.service.signal(SIGTERM)
            _ = await session.service.waitForExit()
            try Data("{\"desired\": {\"configuration\": {\"category\": \"playback\", \"mode\": \"default\", \"options\": [\"defaultToSpeaker\"]}}, \"keepEnforced\": true}".utf8)
                .write(to: session.stateFile)
            let restarted = try await ServiceProcess("earshot-session", arguments: ["--state-file", session.stateFile.path],
                                                     bus: session.bus, busName: SessionFixture.busName,
                                                     environment: SessionFixture.devices(of: session.bus, extra: []).environment)
            defer { restarted.stop() }
            #expect(try await session.state().category == "soloAmbient")
            #expect(restarted.logText.contains("cannot read the state file"))
            await restarted.shutdown()
        }
    }
}
