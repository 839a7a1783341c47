import EarshotContract
import EarshotDBus
import Foundation
import Glibc
import Testing

@Suite struct CaptureTests {
    static func littleEndian(_ bytes: Data, at offset: Int, count: Int) -> Int {
        (0..<count).reduce(0) { $0 | Int(bytes[bytes.startIndex + offset + $1]) << (8 * $1) }
    }

    @Test func captureWritesTheMicrophoneIntoAWaveFile() async throws {
        try await ClientFixture.with(["earshot-capture"]) { fixture in
            let take = fixture.file("take.wav")
            let result = try await fixture.earshot(["capture", "--rate", "16000", "--bits", "16", "--max-ms", "500",
                                                    "--out", take.path, "--json"])
            #expect(result.status == 0, "\(result)")
            // stderr is not a terminal: no meter.
            #expect(result.stderr.isEmpty, "\(result)")
            let outcome = try result.object()
            #expect(outcome["resultCode"] as? String == "SUCCESS")
            #expect(outcome["reason"] as? String == "timeout")
            #expect(outcome["frames"] as? Int == 8000)
            #expect(outcome["channels"] as? Int == 1)

            let wave = try Data(contentsOf: take)
            #expect(wave.count == 44 + 16000)
            #expect(wave.prefix(4) == Data("RIFF".utf8) && wave[8..<16] == Data("WAVEfmt ".utf8))
            #expect(Self.littleEndian(wave, at: 4, count: 4) == 36 + 16000)
            #expect(Self.littleEndian(wave, at: 20, count: 2) == 1)      // PCM
            #expect(Self.littleEndian(wave, at: 22, count: 2) == 1)      // channels
            #expect(Self.littleEndian(wave, at: 24, count: 4) == 16000)  // rate
            #expect(Self.littleEndian(wave, at: 34, count: 2) == 16)     // bits
            #expect(Self.littleEndian(wave, at: 40, count: 4) == 16000)  // data size
            #expect(Array(wave.dropFirst(44)) == Array(fixture.microphone.prefix(16000)))
        }
    }

    @Test func ctrlCCancelsThePassThru() async throws {
        try await ClientFixture.with(["earshot-capture"]) { fixture in
            let take = fixture.file("cancelled.wav")
            let running = try fixture.start(["capture", "--rate", "16000", "--max-ms", "20000", "--chunk-ms", "50", "--out", take.path])
            _ = try await fixture.waitForObject(CaptureContract.busName, CaptureContract.Manager.active.name)
            try await Task.sleep(for: .milliseconds(400))
            running.signal(SIGINT)
            let result = try await running.wait()
            #expect(result.status == 4, "\(result)")
            #expect(result.lines.first == "ABORTED (cancel)", "\(result)")
            #expect(result.stderr.contains("cancelling /org/earshot/Capture1/PassThru/"), "\(result)")
            #expect(try await fixture.property(CaptureContract.busName, "/org/earshot/Capture1", CaptureContract.Manager.interface.name,
                                              CaptureContract.Manager.active.name)
                    == .objectPath(.root))
            // What arrived before the cancel is in the file, as captured.
            let wave = try Data(contentsOf: take)
            let data = Array(wave.dropFirst(44))
            #expect(data.count >= 3200, "\(wave.count) bytes")
            #expect(Self.littleEndian(wave, at: 40, count: 4) == data.count)
            #expect(data == Array(fixture.microphone.prefix(data.count)))
        }
    }

    @Test func aSecondCaptureIsRejected() async throws {
        try await ClientFixture.with(["earshot-capture"]) { fixture in
            let first = try fixture.start(["capture", "--max-ms", "3000", "--out", fixture.file("first.wav").path])
            _ = try await fixture.waitForObject(CaptureContract.busName, CaptureContract.Manager.active.name)
            let second = try await fixture.earshot(["capture", "--max-ms", "500", "--out", fixture.file("second.wav").path])
            #expect(second.status == 1)
            #expect(second.stderr.hasPrefix("earshot: org.earshot.Error.Rejected: "), "\(second)")
            #expect(!FileManager.default.fileExists(atPath: fixture.file("second.wav").path))
            first.signal(SIGINT)
            #expect(try await first.wait().status == 4)
        }
    }
}
