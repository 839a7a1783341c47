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
            try await session.setDesiredState([
                "Category": .string("play-and-record"), "Mode": .string("VOICE-CHAT"),
                "Options": .strings(["speaker", "duck"]), "SampleRate": .uint32(44100), "IOBufferDuration": .double(0.0231),
                "PreferredInput": .string("stereo_mic"), "PolarPattern": .string("Stereo"),
                "InputOrientation": .string("landscape-left"), "Active": .boolean(true), "DataSourceName": .string("default"),
            ])
            let state = try await session.state()
            #expect(state.string("Category") == "playAndRecord")
            #expect(state.string("Mode") == "voiceChat")
            #expect(state["Options"]?.stringArrayValue == ["mixWithOthers", "duckOthers", "defaultToSpeaker"])
            #expect(state["SampleRate"]?.doubleValue == 44100)
            // The period the device granted: whole frames near the hint, read back.
            let duration = try #require(state["IOBufferDuration"]?.doubleValue)
            let frames = duration * 44100
            #expect(abs(frames - frames.rounded()) < 1e-6, "\(duration) s is not whole frames")
            #expect(abs(duration - 0.0231) < 2.0 / 44100, "\(duration)")
            #expect(state["Channels"]?.uint32Value == 2)
            #expect(state.string("PolarPattern") == "stereo")
            #expect(state.string("InputOrientation") == "landscapeLeft")
            #expect(state.string("PreferredInput") == "stereo_mic")
            #expect(state.string("DataSourceName") == "default")
            #expect(state["Active"]?.boolValue == true)
            #expect(state["KeepEnforced"]?.boolValue == true)
            #expect(state["Route"]?.stringKeyedValue?["Input"]?.stringValue == "stereo_mic")

            // The same values as properties, announced by PropertiesChanged.
            #expect(try await session.property("Category")?.stringValue == "playAndRecord")
            #expect(try await session.property("Channels")?.uint32Value == 2)
            let desired = try #require(try await session.property("DesiredState")?.stringKeyedValue)
            #expect(desired["Category"]?.stringValue == "playAndRecord")
            #expect(desired["Options"]?.stringArrayValue == ["duckOthers", "defaultToSpeaker"])
            #expect(desired["SampleRate"]?.doubleValue == 44100)
            let announced = try #require(await changes.next(timeout: .seconds(5)))
            let changed = try #require(announced.body[1].stringKeyedValue)
            #expect(changed["Category"]?.stringValue == "playAndRecord")
            #expect(changed["Route"] != nil)

            // The mono microphone at 16 kHz: one channel, the rate in force follows.
            try await session.setDesiredState(["Category": .string("record"), "PreferredInput": .string("mono_mic"),
                                               "SampleRate": .double(16000)])
            let mono = try await session.state()
            #expect(mono["Channels"]?.uint32Value == 1)
            #expect(mono["SampleRate"]?.doubleValue == 16000)
            #expect(mono.string("PolarPattern") == "omnidirectional")
            #expect(mono["Active"]?.boolValue == true)  // an absent key leaves its value alone
        }
    }

    @Test func listInputsProbesEachMicrophone() async throws {
        try await SessionFixture.with { session in
            let inputs = try await session.inputs()
            let byName = Dictionary(uniqueKeysWithValues: inputs.compactMap { input in input.string("Name").map { ($0, input) } })
            let mono = try #require(byName["mono_mic"])
            let stereo = try #require(byName["stereo_mic"])
            #expect(mono["Channels"]?.arrayValue?.compactMap(\.uint32Value) == [1])
            #expect(stereo["Channels"]?.arrayValue?.compactMap(\.uint32Value) == [2])
            #expect(mono["PolarPatterns"]?.stringArrayValue == ["cardioid", "omnidirectional", "subcardioid"])
            #expect(stereo["PolarPatterns"]?.stringArrayValue == ["stereo", "cardioid", "omnidirectional", "subcardioid"])
            #expect(mono["DataSources"]?.stringArrayValue == ["default"])
            #expect(mono["SampleRates"]?.arrayValue?.compactMap(\.uint32Value).contains(48000) == true)
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
            let names = try await session.inputs().compactMap { $0.string("Name") }
            #expect(names.contains("mono_mic") && !names.contains("pw_mic"))
            let mapped = try session.service.mappedFiles()
            #expect(!mapped.contains { $0.contains("libpipewire") || $0.contains("libspa") }, "\(mapped)")
        }
    }

    @Test func badRequestsGetNamedErrorsAndChangeNothing() async throws {
        try await SessionFixture.with { session in
            try await session.setDesiredState(["Category": .string("playback")])
            let before = try await session.property("DesiredState")
            let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
            let cases: [(String, [String: DBusValue], String)] = [
                ("org.earshot.Error.InvalidCategory", ["Category": .string("loud")], "Category"),
                ("org.earshot.Error.InvalidMode", ["Category": .string("record"), "Mode": .string("karaoke")], "Mode"),
                ("org.earshot.Error.InvalidOption", ["Category": .string("playback"), "Options": .strings(["duck", "louder"])], "Options[1]"),
                ("org.earshot.Error.InvalidOrientation", ["Category": .string("record"), "InputOrientation": .string("sideways")], "InputOrientation"),
                ("org.earshot.Error.InvalidPolarPattern", ["Category": .string("record"), "PolarPattern": .string("figure8")], "PolarPattern"),
                ("org.earshot.Error.IncompatibleOption", ["Category": .string("playback"), "Options": .strings(["speaker"])], "defaultToSpeaker"),
                ("org.earshot.Error.IncompatibleOption", ["Category": .string("ambient"), "Mode": .string("voiceChat")], "voiceChat"),
                (invalidArgs, ["Mode": .string("default")], "Category"),
                (invalidArgs, ["Category": .uint32(1)], "Category"),
                (invalidArgs, ["Category": .string("record"), "Loudness": .double(3)], "Loudness"),
                (invalidArgs, ["Category": .string("record"), "SampleRate": .double(10)], "SampleRate"),
                (invalidArgs, ["Category": .string("record"), "IOBufferDuration": .double(5)], "IOBufferDuration"),
                (invalidArgs, ["Category": .string("record"), "Options": .string("duck")], "Options"),
            ]
            for (name, request, field) in cases {
                let error = await expectDBusError(name) { try await session.setDesiredState(request) }
                #expect(error?.message.contains(field) == true, "\(error?.message ?? "")")
            }
            #expect(try await session.property("DesiredState") == before, "a refused request changed the desired state")
            #expect(try await session.state().string("Category") == "playback")

            // Refusals by the devices: the first failing step is the reply.
            let device: [(String, [String: DBusValue])] = [
                ("org.earshot.Error.InvalidInputType", ["Category": .string("record"), "PreferredInput": .string("no_such_mic")]),
                ("org.earshot.Error.DataSourceNotFound", ["Category": .string("record"), "PreferredInput": .string("mono_mic"),
                                                          "DataSourceName": .string("front")]),
                ("org.earshot.Error.PolarPatternNotSupported", ["Category": .string("record"), "PreferredInput": .string("mono_mic"),
                                                                "PolarPattern": .string("stereo")]),
            ]
            for (name, request) in device {
                await expectDBusError(name) { try await session.setDesiredState(request) }
            }
            // With no sound card, the built-in microphone does not exist.
            if (try? FileManager.default.contentsOfDirectory(atPath: "/dev/snd"))?.contains(where: { $0.hasPrefix("pcmC") && $0.hasSuffix("c") }) != true {
                await expectDBusError("org.earshot.Error.NoInputDevice") {
                    try await session.setDesiredState(["Category": .string("record"), "PreferredInput": .string("builtInMic")])
                }
            }
            // A refused step leaves what came before it applied: the category is record.
            #expect(try await session.state().string("Category") == "record")
        }
    }

    @Test func stateFileSurvivesARestart() async throws {
        try await SessionFixture.with { session in
            try await session.setDesiredState(["Category": .string("record"), "PreferredInput": .string("stereo_mic"),
                                               "PolarPattern": .string("stereo"), "SampleRate": .double(22050)])
            try await session.setProperty("KeepEnforced", .boolean(false))
            let desired = try await session.property("DesiredState")
            let state = try await session.state()
            #expect(FileManager.default.fileExists(atPath: session.stateFile.path))

            session.service.signal(SIGTERM)
            #expect(await session.service.waitForExit() == 0)
            let restarted = try await ServiceProcess("earshot-session", arguments: ["--state-file", session.stateFile.path],
                                                     bus: session.bus, busName: SessionFixture.busName,
                                                     environment: SessionFixture.devices(of: session.bus, extra: []).environment)
            defer { restarted.stop() }
            #expect(try await session.property("DesiredState") == desired)
            let after = try await session.state()
            #expect(after == state.merging(["KeepEnforced": .boolean(false)]) { _, new in new })
            #expect(after["Channels"]?.uint32Value == 2)
            await restarted.shutdown()
        }
    }

    @Test func aCorruptStateFileStartsFromDefaults() async throws {
        try await SessionFixture.with { session in
            try await session.setDesiredState(["Category": .string("playback")])
            session.service.signal(SIGTERM)
            _ = await session.service.waitForExit()
            try Data("{\"desired\": {\"configuration\": {\"category\": \"playback\", \"mode\": \"default\", \"options\": [\"defaultToSpeaker\"]}}, \"keepEnforced\": true}".utf8)
                .write(to: session.stateFile)
            let restarted = try await ServiceProcess("earshot-session", arguments: ["--state-file", session.stateFile.path],
                                                     bus: session.bus, busName: SessionFixture.busName,
                                                     environment: SessionFixture.devices(of: session.bus, extra: []).environment)
            defer { restarted.stop() }
            #expect(try await session.state().string("Category") == "soloAmbient")
            #expect(restarted.logText.contains("cannot read the state file"))
            await restarted.shutdown()
        }
    }
}
