import CaptureCore
import ContractCore
import Testing

@Suite struct ChunkerTests {
    @Test func chunksHoldExactlyChunkMsOfAudio() {
        var chunker = Chunker(sampleRate: 16000, chunkMs: 10, bytesPerFrame: 2)
        let input = (0..<(16_050 * 2)).map { UInt8(truncatingIfNeeded: $0) }  // 1 s and 50 frames
        var chunks: [AudioChunk] = []
        // Reads of an awkward size.
        var offset = 0
        while offset < 16_050 * 2 {
            let end = min(16_050 * 2, offset + 734)
            chunks += chunker.append(input[offset..<end], monotonicUs: UInt64(offset))
            offset = end
        }
        if let last = chunker.flush(monotonicUs: 0) { chunks.append(last) }
        #expect(chunks.dropLast().allSatisfy { $0.data.count == 320 })
        #expect(chunks.last?.data.count == 16_050 * 2 - 100 * 320)
        #expect(chunks.map(\.sequence) == Array(0..<UInt64(chunks.count)))
        #expect(chunks.flatMap(\.data) == Array(input.prefix(16_050 * 2)))
    }

    @Test func aReadOfExactlyTheNextChunkIsHandedOnUncopied() {
        var chunker = Chunker(sampleRate: 16000, chunkMs: 100, bytesPerFrame: 2)
        let read = (0..<3200).map { UInt8(truncatingIfNeeded: $0) }
        var emitted: [AudioChunk] = []
        chunker.append(read, monotonicUs: 7) { emitted.append($0) }
        #expect(emitted.map(\.sequence) == [0])
        #expect(emitted.first?.monotonicUs == 7)
        let shared = read.withUnsafeBufferPointer { readBytes in
            emitted[0].data.withUnsafeBufferPointer { $0.baseAddress == readBytes.baseAddress }
        }
        #expect(shared, "the chunk is a copy of the read")
        // Half a chunk, then a chunk and a half: two chunks, each joined from both reads.
        chunker.append(Array(read[..<1600]), monotonicUs: 8) { emitted.append($0) }
        chunker.append(read + read[..<1600], monotonicUs: 9) { emitted.append($0) }
        #expect(emitted.map(\.sequence) == [0, 1, 2])
        #expect(emitted[1].data == Array(read[..<1600] + read[..<1600]))
        #expect(emitted[2].data == Array(read[1600...] + read[..<1600]))
        #expect(emitted[2].monotonicUs == 9)
        #expect(chunker.flush(monotonicUs: 10) == nil)
    }

    @Test func fractionalChunksAlternateAndNeverDrift() {
        var chunker = Chunker(sampleRate: 22050, chunkMs: 10, bytesPerFrame: 1)
        let chunks = chunker.append([UInt8](repeating: 128, count: 22050)[...], monotonicUs: 0)
        #expect(chunks.count == 100)
        #expect(Set(chunks.map(\.data.count)) == [220, 221])
        #expect(chunks.reduce(0) { $0 + $1.data.count } == 22050)
    }
}

@Suite struct PassThruTests {
    static func request(_ configure: (inout PassThruRequest) -> Void = { _ in }) -> PassThruRequest {
        var request = PassThruRequest(samplingRate: 16000, bitsPerSample: 16, maxDurationMs: 250)
        request.chunkMs = 100
        configure(&request)
        return request
    }

    @Test func timeoutAfterExactlyMaxDurationOfFrames() {
        var passThru = PassThru(request: Self.request())
        #expect(passThru.phase == .recording)
        var chunks: [AudioChunk] = []
        var outcome: PassThruOutcome?
        for _ in 0..<10 where outcome == nil {
            let step = passThru.capture([UInt8](repeating: 1, count: 1600 * 2), monotonicUs: 5)
            chunks += step.chunks
            outcome = step.outcome
        }
        #expect(outcome == PassThruOutcome(reason: .timeout, promptFailed: false))
        #expect(passThru.framesCaptured == 4000)
        #expect(chunks.map(\.data.count) == [3200, 3200, 1600])
        #expect(passThru.phase == .finished)
        let after = passThru.capture([1, 2], monotonicUs: 6)
        #expect(after.chunks.isEmpty)
        let again = passThru.end(.done, monotonicUs: 7)
        #expect(again == nil)  // the first ending wins
    }

    /// Audio that went to its destinations by another way counts against MaxDuration as
    /// captured audio does; it may only pass by with nothing waiting to be cut.
    @Test func audioPassedByCountsToTheFrame() {
        var passThru = PassThru(request: Self.request())
        #expect(passThru.canPassAudioBy)
        #expect(passThru.passedBy(frames: 1600) == nil)
        #expect(passThru.framesCaptured == 1600 && passThru.remainingMs == 150)
        // Half a chunk waits to be cut: audio may not pass it by.
        #expect(passThru.capture([UInt8](repeating: 1, count: 800 * 2), monotonicUs: 1).chunks.isEmpty)
        #expect(!passThru.canPassAudioBy)
        #expect(passThru.capture([UInt8](repeating: 1, count: 800 * 2), monotonicUs: 2).chunks.map(\.data.count) == [3200])
        #expect(passThru.canPassAudioBy)
        // Past MaxDuration: cut at it, and the end is a timeout.
        #expect(passThru.passedBy(frames: 5000) == PassThruOutcome(reason: .timeout, promptFailed: false))
        #expect(passThru.framesCaptured == 4000 && passThru.phase == .finished && !passThru.canPassAudioBy)
        #expect(passThru.passedBy(frames: 10) == nil && passThru.framesCaptured == 4000)
        // Not while prompting, nor with silence to watch.
        #expect(!PassThru(request: Self.request { $0.initialPrompt = [SpeechChunk(kind: .text, text: "Speak now")] }).canPassAudioBy)
        #expect(!PassThru(request: Self.request { $0.endOnSilenceMs = 1000 }).canPassAudioBy)
    }

    @Test func endingFlushesTheShortLastChunk() throws {
        var passThru = PassThru(request: Self.request())
        let step = passThru.capture([UInt8](repeating: 2, count: 2000), monotonicUs: 1)
        #expect(step.chunks.isEmpty)
        let ended = passThru.end(.cancel, monotonicUs: 9)
        let last = try #require(ended)
        #expect(last.map(\.data.count) == [2000])
        #expect(passThru.outcome?.resultCode == .aborted)
        #expect(passThru.durationMs == 62)
    }

    @Test func promptComesBeforeRecording() {
        var passThru = PassThru(request: Self.request { $0.initialPrompt = [SpeechChunk(kind: .text, text: "Speak now")] })
        #expect(passThru.phase == .prompting)
        let ignored = passThru.capture([UInt8](repeating: 0, count: 320), monotonicUs: 0)
        #expect(ignored.chunks.isEmpty)
        #expect(passThru.framesCaptured == 0)
        #expect(passThru.remainingMs == 250)
        passThru.promptFinished(spoken: false)
        #expect(passThru.phase == .recording)
        _ = passThru.capture([UInt8](repeating: 0, count: 1600 * 2), monotonicUs: 0)
        #expect(passThru.remainingMs == 150)
        _ = passThru.end(.done, monotonicUs: 0)
        #expect(passThru.outcome?.resultCode == .warnings)
        #expect(passThru.outcome?.success == true)
    }

    /// `BargeIn`: recording runs from the start, with the prompt; a prompt that was not
    /// spoken still makes a successful end WARNINGS.
    @Test func bargeInRecordsWithThePrompt() {
        var passThru = PassThru(request: Self.request {
            $0.initialPrompt = [SpeechChunk(kind: .text, text: "Speak now")]
            $0.bargeIn = true
        })
        #expect(passThru.phase == .recording)
        _ = passThru.capture([UInt8](repeating: 0, count: 1600 * 2), monotonicUs: 0)
        #expect(passThru.framesCaptured == 1600)
        passThru.promptFinished(spoken: false)
        #expect(passThru.phase == .recording)
        #expect(passThru.framesCaptured == 1600)
        _ = passThru.end(.done, monotonicUs: 0)
        #expect(passThru.outcome?.resultCode == .warnings)
        // Without a prompt, BargeIn changes nothing and processes nothing.
        #expect(!Self.request { $0.bargeIn = true }.processesSpeech)
    }

    @Test func silenceAfterSpeechEndsWithSuccess() throws {
        let speech = try SpeechSamples.speech("Hello there")
        var request = PassThruRequest(samplingRate: SpeechSamples.rate, bitsPerSample: 16, maxDurationMs: 20_000)
        request.endOnSilenceMs = 800
        var passThru = PassThru(request: request)
        let input = SpeechSamples.bytes(SpeechSamples.silence(ms: 300) + speech + SpeechSamples.silence(ms: 3000))
        var outcome: PassThruOutcome?
        var offset = 0
        while offset < input.count, outcome == nil {
            let end = min(input.count, offset + 4410)
            outcome = passThru.capture(Array(input[offset..<end]), monotonicUs: 0).outcome
            offset = end
        }
        #expect(outcome?.reason == .silence && outcome?.resultCode == .success)
        #expect(passThru.durationMs < 300 + UInt32(speech.count * 1000 / 22050) + 1200)
    }
}
