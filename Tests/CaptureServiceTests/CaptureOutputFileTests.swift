import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

/// `OutputPath`: a script that starts a pass-thru with `busctl` (which leaves at once) gets
/// the audio as a WAV file, created with the caller's permissions.
@Suite(.serialized, .timeLimit(.minutes(2))) struct CaptureOutputFileTests {
    static let user = "earshot-wav-writer"

    /// `busctl call … PerformAudioPassThru` with `OutputPath`, run by `prefix` (another
    /// user, or nobody); returns the pass-thru's path.
    static func busctl(_ fixture: CaptureFixture, output: URL, maxMs: UInt32, prefix: [String] = []) async throws -> ObjectPath {
        let printed = try await ToolRun.run(prefix + [
            "/usr/bin/busctl", "--address=\(fixture.bus.address)", "call", CaptureFixture.busName, CaptureFixture.path.rawValue,
            CaptureFixture.manager, CaptureManager.performAudioPassThru.name, "a{sv}", "6",
            RequestKeys.samplingRate.name, "u", "16000", RequestKeys.bitsPerSample.name, "u", "16", RequestKeys.audioType.name, "s", "PCM",
            RequestKeys.maxDuration.name, "u", String(maxMs), RequestKeys.outliveOwner.name, "b", "true",
            RequestKeys.outputPath.name, "s", output.path,
        ])
        // o "/org/earshot/Capture1/PassThru/1"
        let quoted = try #require(printed.split(separator: "\"").dropFirst().first)
        return try ObjectPath(String(quoted))
    }

    /// The WAV file's format fields and samples.
    static func read(_ url: URL) throws -> (rate: UInt32, channels: UInt16, bits: UInt16, samples: [UInt8]) {
        let data = [UInt8](try Data(contentsOf: url))
        try #require(data.count >= 44)
        func u32(_ at: Int) -> UInt32 { UInt32(data[at]) | UInt32(data[at + 1]) << 8 | UInt32(data[at + 2]) << 16 | UInt32(data[at + 3]) << 24 }
        func u16(_ at: Int) -> UInt16 { UInt16(data[at]) | UInt16(data[at + 1]) << 8 }
        #expect(String(decoding: data[0..<4], as: UTF8.self) == "RIFF")
        #expect(String(decoding: data[8..<16], as: UTF8.self) == "WAVEfmt ")
        #expect(String(decoding: data[36..<40], as: UTF8.self) == "data")
        let size = Int(u32(40))
        #expect(Int(u32(4)) == 36 + size + size % 2, "RIFF size")
        #expect(data.count == 44 + size + size % 2, "file size")
        return (u32(24), u16(22), u16(34), Array(data[44..<min(data.count, 44 + size)]))
    }

    @Test func aBusctlScriptGetsWhatTheMicrophoneGaveAsAWaveFile() async throws {
        let input = CaptureFixture.pattern(65536)
        try await CaptureFixture.with(input: input) { fixture in
            let finished = try await fixture.client.subscribe(MatchRule(sender: CaptureFixture.busName, interface: CaptureFixture.passThru,
                                                                        member: PassThruMembers.finished.name))
            let output = fixture.bus.directory.appendingPathComponent("take.wav")
            let path = try await Self.busctl(fixture, output: output, maxMs: 1000)
            let end = try #require(await finished.next(timeout: .seconds(10)))
            #expect(end.path == path)
            let result = try #require(PassThruResult(finished: end.body))
            #expect(result.resultCode == .success)
            let frames = result.framesCaptured
            let wave = try Self.read(output)
            #expect(wave.rate == 16000 && wave.channels == 1 && wave.bits == 16)
            #expect(UInt64(wave.samples.count) == frames * 2)
            #expect(wave.samples.count == 32000)
            #expect(wave.samples == Array(input.prefix(wave.samples.count)), "sample for sample what the microphone gave")
        }
    }

    @Test func anEndedPassThruLeavesACompleteFileAndABadPathIsRefused() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(65536), pace: "realtime") { fixture in
            let output = fixture.bus.directory.appendingPathComponent("cut.wav")
            let passThru = try await fixture.capture.perform(CaptureFixture.request(maxMs: 10000) { $0.outputPath = output.path })
            try await Task.sleep(for: .milliseconds(700))
            try await passThru.cancel()
            #expect(try await passThru.result.resultCode != .success)
            let wave = try Self.read(output)  // sizes written, whatever the end
            #expect(wave.samples.count > 8000 && wave.samples.count < 64000, "\(wave.samples.count) bytes")

            for bad in ["relative.wav", "/tmp/", fixture.bus.directory.appendingPathComponent("missing/dir/take.wav").path] {
                // Sent raw, so that the service's own check answers.
                await expectDBusError(EarshotErrorName.invalidData.name) {
                    try await fixture.start(raw: CaptureFixture.rawRequest([RequestKeys.outputPath.name: .string(bad)]))
                }
            }
            // A refused request starts nothing: the next one is accepted.
            _ = try await fixture.start(CaptureFixture.request(maxMs: 100))
        }
    }

    @Test func anotherUsersFileIsMadeWithThatUsersPermissions() async throws {
        let writer = try await TestUser.ensure(Self.user, in: [])
        try await CaptureFixture.with(input: CaptureFixture.pattern(65536)) { fixture in
            // The user may reach the bus's socket, and owns one directory of two.
            chmod(fixture.bus.directory.path, 0o755)
            let theirs = fixture.bus.directory.appendingPathComponent("theirs")
            let rootOnly = fixture.bus.directory.appendingPathComponent("root-only")
            for directory in [theirs, rootOnly] {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            }
            chown(theirs.path, writer.uid, writer.gid)
            let prefix = try TestUser.commandPrefix(Self.user)

            let refused = rootOnly.appendingPathComponent("take.wav")
            do {
                _ = try await Self.busctl(fixture, output: refused, maxMs: 500, prefix: prefix)
                Issue.record("a file in a directory the caller may not write was accepted")
            } catch {
                #expect("\(error)".contains("Access denied"), "\(error)")  // busctl names the error, not its text
            }
            #expect(!FileManager.default.fileExists(atPath: refused.path))

            let finished = try await fixture.client.subscribe(MatchRule(sender: CaptureFixture.busName, interface: CaptureFixture.passThru,
                                                                        member: PassThruMembers.finished.name))
            let allowed = theirs.appendingPathComponent("take.wav")
            _ = try await Self.busctl(fixture, output: allowed, maxMs: 500, prefix: prefix)
            #expect(await finished.next(timeout: .seconds(10)) != nil)
            let attributes = try FileManager.default.attributesOfItem(atPath: allowed.path)
            #expect((attributes[.ownerAccountID] as? NSNumber)?.uint32Value == writer.uid, "the file is the caller's")
            #expect(try Self.read(allowed).samples.count == 16000)
        }
    }
}
