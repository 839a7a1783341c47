import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Glibc
import Testing

@Suite struct RecordPieceTests {
    @Test func promptCaptureStoreConfirm() async throws {
        try await Deployment.with { deployment in
            let (finished, changes) = try await deployment.watch()
            let job = try await deployment.record(["Title": .string("Morning idea"), "Prompt": .string("Say something"),
                                                   "MaxDuration": .uint32(1500), "SamplingRate": .uint32(16000),
                                                   "Tempo": .uint32(100), "DisplayText1": .string("Recording")])
            var states: [String] = []
            let outcome = try await Deployment.finished(finished, job, timeout: .seconds(40))
            while let signal = await changes.next(timeout: .milliseconds(50)) {
                if signal.path == job, let state = signal.body[1].stringKeyedValue?["State"]?.stringValue { states.append(state) }
            }
            #expect(outcome.code == "SUCCESS", "\(outcome.info)")
            #expect(states == ["prompting", "recording", "storing", "confirming", "finished"])
            #expect(try await deployment.jobProperty(job, "FramesCaptured") == .uint64(24000))
            #expect(try await deployment.jobProperty(job, "PieceId")?.stringValue == outcome.pieceID)

            let piece = try #require(try await deployment.pieces("Get", [.string(outcome.pieceID)]).first?.stringKeyedValue)
            #expect(piece["Title"]?.stringValue == "Morning idea")
            #expect(piece["Tempo"]?.doubleValue == 100)
            #expect(piece["LengthMicroseconds"]?.uint64Value == 1_500_000)
            #expect(piece["SampleRate"]?.uint32Value == 16000)
            // The mix stem is the microphone's first 1.5 s behind a WAV header.
            let reply = try await deployment.pieces("OpenMixStem", [.string(outcome.pieceID), .string("wave")])
            let fd = try #require(reply.first?.unixFDValue?.rawValue)
            var stem: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                stem += buffer[0..<count]
            }
            #expect(stem.count == 44 + 48000)
            #expect(Array(stem.dropFirst(44)) == Array(deployment.microphone.prefix(48000)))
        }
    }

    /// A job whose pass-thru capture rejects (another one records) waits in `preparing`
    /// for the time the rejection names, then records.
    @Test func aJobWaitsForAnotherPassThruToEnd() async throws {
        try await Deployment.with { deployment in
            let (finished, changes) = try await deployment.watch()
            let other = try await deployment.bus.connect()
            defer { other.close() }
            let otherEnds = try await deployment.client.subscribe(MatchRule(sender: "org.earshot.Capture1",
                                                                            interface: "org.earshot.Capture1.PassThru", member: "Finished"))
            let competing = try #require(try await other.call(
                destination: "org.earshot.Capture1", path: "/org/earshot/Capture1", interface: "org.earshot.Capture1",
                member: "PerformAudioPassThru", [.vardict(["SamplingRate": .uint32(16000), "BitsPerSample": .uint32(16),
                                                           "AudioType": .string("PCM"), "MaxDuration": .uint32(1500),
                                                           "MuteAudio": .boolean(false)])]).first?.objectPathValue)
            let job = try await deployment.record(["Title": .string("Second in line"), "MaxDuration": .uint32(500)])
            #expect(try await deployment.jobProperty(job, "State") == .string("preparing"))
            let end = try #require(await otherEnds.next(timeout: .seconds(10)))
            #expect(end.path == competing)
            let outcome = try await Deployment.finished(finished, job, timeout: .seconds(30))
            #expect(outcome.code == "SUCCESS", "\(outcome.info)")
            #expect(try await deployment.jobProperty(job, "FramesCaptured") == .uint64(8000))
            var states: [String] = []
            while let signal = await changes.next(timeout: .milliseconds(50)) {
                if signal.path == job, let state = signal.body[1].stringKeyedValue?["State"]?.stringValue { states.append(state) }
            }
            #expect(states.first == "recording", "\(states)")  // it never left preparing before the microphone was free
        }
    }

    @Test func cancelWhileRecordingLeavesNoPiece() async throws {
        try await Deployment.with { deployment in
            let (finished, changes) = try await deployment.watch()
            let job = try await deployment.record(["Title": .string("Never mind"), "MaxDuration": .uint32(20000)])
            try await Deployment.state(changes, job, becomes: "recording")
            _ = try await deployment.client.call(destination: Deployment.orchestrator, path: job, interface: Deployment.job, member: "Cancel")
            let outcome = try await Deployment.finished(finished, job)
            #expect(outcome.code == "ABORTED")
            #expect(outcome.pieceID == "")
            #expect(try await deployment.pieces("List", [.vardict([:])]).last == .uint32(0))
            await expectDBusError("org.earshot.Error.Rejected") {
                _ = try await deployment.client.call(destination: Deployment.orchestrator, path: job, interface: Deployment.job, member: "Cancel")
            }
        }
    }

    @Test func aServiceDyingEndsTheJobAndTheNextJobWorks() async throws {
        try await Deployment.with { deployment in
            let (finished, changes) = try await deployment.watch()
            let serviceChanges = try await deployment.client.subscribe(MatchRule(sender: Deployment.orchestrator,
                                                                                 interface: Deployment.orchestrator,
                                                                                 member: "ServiceChanged"))
            let job = try await deployment.record(["Title": .string("Interrupted"), "MaxDuration": .uint32(20000)])
            try await Deployment.state(changes, job, becomes: "recording")
            deployment.process("earshot-capture")?.signal(SIGKILL)
            let outcome = try await Deployment.finished(finished, job)
            #expect(outcome.code == "GENERIC_ERROR")
            #expect(outcome.info["Reason"]?.stringValue?.contains("org.earshot.Capture1") == true, "\(outcome.info)")
            let change = try #require(await serviceChanges.next(timeout: .seconds(5)))
            #expect(change.body == [.string("org.earshot.Capture1"), .boolean(false)])
            let services = try await deployment.client.call(destination: Deployment.orchestrator, path: Deployment.path,
                                                            interface: "org.freedesktop.DBus.Properties", member: "Get",
                                                            [.string(Deployment.orchestrator), .string("Services")]).first?.variantValue
            let captureEntry = services?.stringKeyedValue?["org.earshot.Capture1"]
            #expect(captureEntry == .structure([.string(""), .boolean(false)]))

            _ = try await deployment.launch("earshot-capture")
            let next = try await deployment.record(["Title": .string("Second try"), "MaxDuration": .uint32(500)])
            let second = try await Deployment.finished(finished, next)
            #expect(second.code == "SUCCESS", "\(second.info)")
            #expect(!second.pieceID.isEmpty)
        }
    }

    @Test func requestsAreChecked() async throws {
        try await Deployment.with { deployment in
            await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") { _ = try await deployment.record(["MaxDuration": .uint32(5)]) }
            await expectDBusError("org.earshot.Error.TitleTooShort") { _ = try await deployment.record(["Title": .string("")]) }
            await expectDBusError("org.earshot.Error.InvalidData") {
                _ = try await deployment.record(["Title": .string("t"), "SamplingRate": .uint32(11025)])
            }
            await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") {
                _ = try await deployment.record(["Title": .string("t"), "Colour": .string("red")])
            }
            // Out of range is the key's declared error, as for the pass-thru's own MaxDuration.
            await expectDBusError("org.earshot.Error.InvalidData") {
                _ = try await deployment.record(["Title": .string("t"), "MaxDuration": .uint32(0)])
            }
        }
    }
}
