import ContractCore
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Glibc
import Testing

@Suite struct RecordPieceTests {
    typealias RecordKeys = Orchestrator.Keys
    typealias PieceKeys = Pieces.PieceKeys
    typealias Capture = CaptureContract.Manager
    typealias CaptureKeys = CaptureContract.Manager.Keys

    @Test func promptCaptureStoreConfirm() async throws {
        try await Deployment.with { deployment in
            let (finished, changes) = try await deployment.watch()
            let job = try await deployment.record([
                RecordKeys.title.name: .string("Morning idea"), RecordKeys.prompt.name: .string("Say something"),
                RecordKeys.maxDuration.name: .uint32(1500), RecordKeys.samplingRate.name: .uint32(16000),
                PieceKeys.tempo.name: .uint32(100), RecordKeys.displayText1.name: .string("Recording"),
            ])
            var states: [String] = []
            let outcome = try await Deployment.finished(finished, job, timeout: .seconds(40))
            while let signal = await changes.next(timeout: .milliseconds(50)) {
                if signal.path == job, let state = signal.body[1].stringKeyedValue?[Job.state]?.stringValue { states.append(state) }
            }
            #expect(outcome.code == "SUCCESS", "\(outcome.info)")
            #expect(states == ["prompting", "recording", "storing", "confirming", "finished"])
            #expect(try await deployment.jobProperty(job, Job.framesCaptured) == .uint64(24000))
            #expect(try await deployment.jobProperty(job, Job.pieceId)?.stringValue == outcome.pieceID)

            let piece = try #require(try await deployment.pieces(Pieces.get, [.string(outcome.pieceID)]).first?.stringKeyedValue)
            #expect(piece[PieceKeys.title]?.stringValue == "Morning idea")
            #expect(piece[PieceKeys.tempo]?.doubleValue == 100)
            #expect(piece[PieceKeys.lengthMicroseconds]?.uint64Value == 1_500_000)
            #expect(piece[Pieces.StoredKeys.sampleRate]?.uint32Value == 16000)
            // The mix stem is the microphone's first 1.5 s behind a WAV header.
            let reply = try await deployment.pieces(Pieces.openMixStem, [.string(outcome.pieceID), .string("wave")])
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
            let otherEnds = try await deployment.client.subscribe(MatchRule(sender: CaptureContract.busName,
                                                                            interface: CaptureContract.PassThru.interface.name,
                                                                            member: CaptureContract.PassThru.finished.name))
            let competing = try #require(try await other.call(
                destination: CaptureContract.busName, path: ObjectPath(declared: CaptureContract.managerPath),
                interface: Capture.interface.name, member: Capture.performAudioPassThru.name,
                [.vardict([CaptureKeys.samplingRate.name: .uint32(16000), CaptureKeys.bitsPerSample.name: .uint32(16),
                           CaptureKeys.audioType.name: .string("PCM"), CaptureKeys.maxDuration.name: .uint32(1500),
                           CaptureKeys.muteAudio.name: .boolean(false)])]).first?.objectPathValue)
            let job = try await deployment.record([RecordKeys.title.name: .string("Second in line"),
                                                   RecordKeys.maxDuration.name: .uint32(500)])
            #expect(try await deployment.jobProperty(job, Job.state) == .string("preparing"))
            let end = try #require(await otherEnds.next(timeout: .seconds(10)))
            #expect(end.path == competing)
            let outcome = try await Deployment.finished(finished, job, timeout: .seconds(30))
            #expect(outcome.code == "SUCCESS", "\(outcome.info)")
            #expect(try await deployment.jobProperty(job, Job.framesCaptured) == .uint64(8000))
            var states: [String] = []
            while let signal = await changes.next(timeout: .milliseconds(50)) {
                if signal.path == job, let state = signal.body[1].stringKeyedValue?[Job.state]?.stringValue { states.append(state) }
            }
            #expect(states.first == "recording", "\(states)")  // it never left preparing before the microphone was free
        }
    }

    @Test func cancelWhileRecordingLeavesNoPiece() async throws {
        try await Deployment.with { deployment in
            let (finished, changes) = try await deployment.watch()
            let job = try await deployment.record([RecordKeys.title.name: .string("Never mind"),
                                                   RecordKeys.maxDuration.name: .uint32(20000)])
            try await Deployment.state(changes, job, becomes: "recording")
            _ = try await deployment.client.call(destination: Deployment.orchestrator, path: job, interface: Deployment.job,
                                                 member: Job.cancel.name)
            let outcome = try await Deployment.finished(finished, job)
            #expect(outcome.code == "ABORTED")
            #expect(outcome.pieceID == "")
            #expect(try await deployment.pieces(Pieces.list, [.vardict([:])]).last == .uint32(0))
            await expectDBusError(EarshotErrorName.rejected.name) {
                _ = try await deployment.client.call(destination: Deployment.orchestrator, path: job, interface: Deployment.job,
                                                     member: Job.cancel.name)
            }
        }
    }

    @Test func aServiceDyingEndsTheJobAndTheNextJobWorks() async throws {
        try await Deployment.with { deployment in
            let (finished, changes) = try await deployment.watch()
            let serviceChanges = try await deployment.client.subscribe(MatchRule(sender: Deployment.orchestrator,
                                                                                 interface: Deployment.manager,
                                                                                 member: Orchestrator.serviceChanged.name))
            let job = try await deployment.record([RecordKeys.title.name: .string("Interrupted"),
                                                   RecordKeys.maxDuration.name: .uint32(20000)])
            try await Deployment.state(changes, job, becomes: "recording")
            deployment.process("earshot-capture")?.signal(SIGKILL)
            let outcome = try await Deployment.finished(finished, job)
            #expect(outcome.code == "GENERIC_ERROR")
            #expect(outcome.info[Job.FinishedKeys.reason]?.stringValue?.contains(CaptureContract.busName) == true, "\(outcome.info)")
            let change = try #require(await serviceChanges.next(timeout: .seconds(5)))
            #expect(change.body == [.string(CaptureContract.busName), .boolean(false)])
            let services = try await deployment.client.call(destination: Deployment.orchestrator, path: Deployment.path,
                                                            interface: "org.freedesktop.DBus.Properties", member: "Get",
                                                            [.string(Deployment.manager), .string(Orchestrator.services.name)])
                .first?.variantValue
            let captureEntry = services?.stringKeyedValue?[CaptureContract.busName]
            #expect(captureEntry == .structure([.string(""), .boolean(false)]))

            _ = try await deployment.launch("earshot-capture")
            let next = try await deployment.record([RecordKeys.title.name: .string("Second try"),
                                                    RecordKeys.maxDuration.name: .uint32(500)])
            let second = try await Deployment.finished(finished, next)
            #expect(second.code == "SUCCESS", "\(second.info)")
            #expect(!second.pieceID.isEmpty)
        }
    }

    @Test func requestsAreChecked() async throws {
        try await Deployment.with { deployment in
            let title = RecordKeys.title.name
            await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") {
                _ = try await deployment.record([RecordKeys.maxDuration.name: .uint32(5)])
            }
            await expectDBusError(EarshotErrorName.titleTooShort.name) { _ = try await deployment.record([title: .string("")]) }
            await expectDBusError(EarshotErrorName.invalidData.name) {
                _ = try await deployment.record([title: .string("t"), RecordKeys.samplingRate.name: .uint32(11025)])
            }
            await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") {
                _ = try await deployment.record([title: .string("t"), "Colour": .string("red")])
            }
            // Out of range is the key's declared error, as for the pass-thru's own MaxDuration.
            await expectDBusError(EarshotErrorName.invalidData.name) {
                _ = try await deployment.record([title: .string("t"), RecordKeys.maxDuration.name: .uint32(0)])
            }
        }
    }
}
