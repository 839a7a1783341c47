import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

@Suite(.timeLimit(.minutes(2))) struct CaptureSilenceTests {
    static func speech(_ text: String) throws -> [UInt8] {
        try SpokenAudio.pcm(text)
    }

    /// Quiet noise of a microphone in a room, under everything.
    static func withRoomNoise(_ pcm: [UInt8]) -> [UInt8] {
        var state: UInt64 = 1
        var out = pcm
        for i in stride(from: 0, to: out.count - 1, by: 2) {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let noise = Int(state >> 33) % 121 - 60
            let sample = Int(Int16(bitPattern: UInt16(out[i]) | UInt16(out[i + 1]) << 8)) + noise
            let clamped = UInt16(bitPattern: Int16(clamping: sample))
            out[i] = UInt8(truncatingIfNeeded: clamped)
            out[i + 1] = UInt8(truncatingIfNeeded: clamped >> 8)
        }
        return out
    }

    static func request(maxMs: UInt32) -> AudioPassThruRequest {
        CaptureFixture.request(rate: 22050, bits: 16, maxMs: maxMs) {
            $0.endOnSilenceMs = 800
            $0.chunkMs = 20
        }
    }

    @Test func speechThenSilenceEndsEarly() async throws {
        let speech = try Self.speech("Please record your message now.")
        let speechMs = speech.count / 2 * 1000 / 22050
        let input = Self.withRoomNoise([UInt8](repeating: 0, count: 22050) + speech + [UInt8](repeating: 0, count: 22050 * 2 * 20))
        try await CaptureFixture.with(input: input) { capture in
            let recording = try await capture.record(Self.request(maxMs: 15_000))
            #expect(recording.result.resultCode == .success && recording.result.reason == .silence, "\(recording.result)")
            let duration = Int(recording.result.durationMs)
            // Half a second of room, the speech, then about the 800 ms of silence.
            #expect(duration > 500 + speechMs && duration < 500 + speechMs + 1500, "\(duration) ms for \(speechMs) ms of speech")
        }
    }

    @Test func silenceAloneRunsToItsTimeout() async throws {
        let input = Self.withRoomNoise([UInt8](repeating: 0, count: 22050 * 2 * 5))
        try await CaptureFixture.with(input: input) { capture in
            let recording = try await capture.record(Self.request(maxMs: 3000))
            #expect(recording.result.resultCode == .success && recording.result.reason == .timeout)
            #expect(recording.result.durationMs == 3000)
        }
    }
}
