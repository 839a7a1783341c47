import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import Foundation
import Testing

@Suite(.timeLimit(.minutes(2))) struct CaptureAudioTests {
    @Test func sixteenBitChunksAreExactAndComplete() async throws {
        let input = CaptureFixture.pattern(200_000)
        try await CaptureFixture.with(input: input) { capture in
            let recording = try await capture.record(CaptureFixture.request(rate: 16000, bits: 16, maxMs: 1050) { $0.chunkMs = 100 })
            #expect(recording.result.resultCode == .success && recording.result.success && recording.result.reason == .timeout)
            #expect(recording.chunks.map(\.sequence) == Array(0..<11))
            #expect(recording.chunks.dropLast().allSatisfy { $0.data.count == 3200 })
            #expect(recording.chunks.last?.data.count == 1600)
            #expect(recording.bytes == Array(input.prefix(16800 * 2)))
            #expect(recording.result.framesCaptured == 16800)
            #expect(recording.result.durationMs == 1050)
            // Stamps come from CLOCK_MONOTONIC, in order.
            let stamps = recording.chunks.map(\.monotonicUs)
            #expect(stamps == stamps.sorted() && stamps.first! > 0)
        }
    }

    @Test func eightBitChunksAreUnsignedBytesAsCaptured() async throws {
        // An 8-bit unsigned sine: silence is 128.
        let input = (0..<40_000).map { UInt8(128 + 100 * sin(Double($0) * 2 * .pi * 440 / 8000)) }
        try await CaptureFixture.with(input: input) { capture in
            let recording = try await capture.record(CaptureFixture.request(rate: 8000, bits: 8, maxMs: 1000) { $0.chunkMs = 30 })
            #expect(recording.result.resultCode == .success)
            #expect(recording.chunks.count == 34)
            #expect(recording.chunks.dropLast().allSatisfy { $0.data.count == 240 })
            #expect(recording.chunks.last?.data.count == 80)
            #expect(recording.bytes == Array(input.prefix(8000)))
        }
    }

    @Test func namedRatesAndWidthsWork() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(100_000)) { capture in
            // SDL's names, which the client does not send: raw.
            let watcher = try await CaptureFixture.subscribe(capture.client)
            let path = try await capture.start(raw: CaptureFixture.rawRequest(maxMs: 100, [
                RequestKeys.samplingRate.name: .string("22KHZ"), RequestKeys.bitsPerSample.name: .string("16_BIT"),
                RequestKeys.chunkMs.name: .uint32(10),
            ]))
            let recording = try await CaptureFixture.collect(watcher, path: path)
            #expect(recording.result.framesCaptured == 2205)
            #expect(Set(recording.chunks.map(\.data.count)) == [440, 442])
        }
    }

    @Test func theStreamCarriesTheSamePCM() async throws {
        let input = CaptureFixture.pattern(400_000)
        try await CaptureFixture.with(input: input, pace: "realtime") { capture in
            var streamed: [UInt8] = []
            // A long pass-thru, ended once the stream has carried half a second: a busy
            // machine cannot end it before the stream is opened.
            let request = CaptureFixture.request(maxMs: 60_000) { $0.chunkMs = 50 }
            let recording = try await capture.record(request) { passThru in
                let fd = try await CaptureFixture.openStream(passThru)
                let raw = try #require(fd.rawValue)
                await CaptureFixture.read(raw, into: &streamed, atLeast: 16000)
                try await passThru.end()
                await CaptureFixture.read(raw, into: &streamed)
            }
            #expect(recording.result.resultCode == .success && recording.result.reason == .end)
            #expect(streamed.count >= 16000)
            // From the moment of the call: the stream is the tail of what the chunks carried.
            #expect(recording.bytes.count >= streamed.count)
            #expect(Array(recording.bytes.suffix(streamed.count)) == streamed)
        }
    }

    /// `Delivery` `stream`: the pipe alone carries the audio, without a signal per chunk;
    /// `both` sends the signals as well.
    @Test(arguments: ["stream", "both"])
    func deliveryChoosesSignalsOrThePipe(_ delivery: String) async throws {
        let input = CaptureFixture.pattern(400_000)
        try await CaptureFixture.with(input: input, pace: "realtime") { capture in
            var streamed: [UInt8] = []
            let request = CaptureFixture.request(maxMs: 60_000) { $0.chunkMs = 50; $0.delivery = .init(rawValue: delivery)! }
            let recording = try await capture.record(request) { passThru in
                let fd = try await CaptureFixture.openStream(passThru)
                let raw = try #require(fd.rawValue)
                await CaptureFixture.read(raw, into: &streamed, atLeast: 16000)
                try await passThru.end()
                await CaptureFixture.read(raw, into: &streamed)
            }
            #expect(recording.result.resultCode == .success && recording.result.reason == .end)
            let frames = recording.result.framesCaptured
            // The stream is the tail of what was captured, from the moment of the call.
            #expect(streamed.count >= 16000 && streamed.count <= Int(frames) * 2)
            #expect(Array(input[(Int(frames) * 2 - streamed.count)..<(Int(frames) * 2)]) == streamed)
            if delivery == "stream" {
                #expect(recording.chunks.isEmpty)
            } else {
                #expect(recording.bytes == Array(input.prefix(Int(frames) * 2)))
            }
        }
    }

    /// A reader that falls behind gets the rest queued, whether the pipe is the only way
    /// the audio goes (`Delivery` `stream`) or not.
    @Test(arguments: ["signals", "stream"])
    func aStreamReaderThatFallsBehindDoesNotHoldUpTheEnd(_ delivery: String) async throws {
        let input = CaptureFixture.pattern(400_000)
        try await CaptureFixture.with(input: input, pace: "realtime") { capture in
            var streamed: [UInt8] = []
            var endTook = Duration.zero
            let request = CaptureFixture.request(maxMs: 60_000) { $0.delivery = .init(rawValue: delivery)! }
            let recording = try await capture.record(request) { passThru in
                let fd = try await CaptureFixture.openStream(passThru)
                let raw = try #require(fd.rawValue)
                #expect(Self.shrinkToOnePage(raw, readingInto: &streamed))
                try await Task.sleep(for: .milliseconds(500))
                let before = ContinuousClock.now
                try await passThru.end()
                endTook = ContinuousClock.now - before
                // The reader catches up after the end and still gets everything, then EOF.
                await CaptureFixture.read(raw, into: &streamed)
            }
            // End does not wait for the reader. (Had it waited, the reader, idle until End
            // returned, would have been given up on and found the stream cut short below;
            // the bound on End's time only leaves room for a loaded machine.)
            #expect(endTook < .seconds(2), "End took \(endTook)")
            #expect(recording.result.resultCode == .success && recording.result.reason == .end)
            #expect(streamed.count >= 12_000, "\(streamed.count) bytes streamed")
            let captured = Int(recording.result.framesCaptured) * 2
            let isTheTail = captured >= streamed.count && input[(captured - streamed.count)..<captured].elementsEqual(streamed)
            #expect(isTheTail, "the \(streamed.count) streamed bytes are not the tail of the \(captured) captured")
            if delivery == "signals" { #expect(recording.bytes == Array(input.prefix(captured))) }
        }
    }

    /// After the end, a slow reader keeps its stream for as long as it keeps taking from
    /// it, however long past the end that is.
    @Test func aSlowReaderGetsTheWholeStreamLongAfterTheEnd() async throws {
        let input = CaptureFixture.pattern(400_000)
        try await CaptureFixture.with(input: input, pace: "realtime") { capture in
            var streamed: [UInt8] = []
            var endedAt = ContinuousClock.now
            let request = CaptureFixture.request(maxMs: 60_000) { $0.delivery = .stream }
            let recording = try await capture.record(request) { passThru in
                let fd = try await CaptureFixture.openStream(passThru)
                let raw = try #require(fd.rawValue)
                #expect(Self.shrinkToOnePage(raw, readingInto: &streamed))
                // About 16 chunks (51 KB) wait in the service at the end.
                try await Task.sleep(for: .milliseconds(1_600))
                try await passThru.end()
                endedAt = ContinuousClock.now
                // One page every 300 ms: a dozen reads, seconds past the end.
                while true {
                    let page = await CaptureFixture.readOnce(raw, limit: 4096)
                    if page.isEmpty { break }
                    streamed += page
                    try await Task.sleep(for: .milliseconds(300))
                }
            }
            let readFor = ContinuousClock.now - endedAt
            let captured = Int(recording.result.framesCaptured) * 2
            #expect(recording.result.resultCode == .success && recording.result.reason == .end)
            #expect(readFor > .seconds(2), "the reader finished \(readFor) after the end")
            #expect(streamed.count >= 40_000, "\(streamed.count) bytes streamed")
            let isTheTail = captured >= streamed.count && input[(captured - streamed.count)..<captured].elementsEqual(streamed)
            #expect(isTheTail, "the \(streamed.count) streamed bytes are not the tail of the \(captured) captured")
        }
    }

    /// Shrinks the pipe behind `fd` to one page, so that after the first chunk the rest of
    /// the stream waits in the service. The pipe shrinks only when what it holds fits: a
    /// busy machine may have let two chunks in already; they are read into `bytes`.
    static func shrinkToOnePage(_ fd: Int32, readingInto bytes: inout [UInt8]) -> Bool {
        for _ in 0..<20 {
            if fcntl(fd, 1031 /* F_SETPIPE_SZ */, 4096) >= 4096 { return true }
            var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&waiting, 1, 0) == 1 {
                var buffer = [UInt8](repeating: 0, count: 65536)
                let n = read(fd, &buffer, buffer.count)
                if n > 0 { bytes += buffer[0..<n] }
            }
        }
        return false
    }

    @Test(arguments: ["signals", "stream"])
    func aStreamReaderThatGoesAwayCostsNothing(_ delivery: String) async throws {
        let input = CaptureFixture.pattern(400_000)
        try await CaptureFixture.with(input: input, pace: "realtime") { capture in
            let request = CaptureFixture.request(maxMs: 60_000) { $0.chunkMs = 20; $0.delivery = .init(rawValue: delivery)! }
            let recording = try await capture.record(request) { passThru in
                // The reader takes a few chunks, then goes away: the service's next write
                // meets a pipe without a reader (EPIPE), which ends that stream, not the service.
                let fd = try await CaptureFixture.openStream(passThru)
                let raw = try #require(fd.rawValue)
                var taken = 0
                while taken < 2048 {
                    let n = await CaptureFixture.readOnce(raw, limit: 2048 - taken).count
                    if n <= 0 { break }
                    taken += n
                }
                #expect(taken == 2048)
                fd.close()
                // About ten more chunks, each written to the closed stream, then the end.
                try await Task.sleep(for: .milliseconds(200))
                try await passThru.end()
            }
            #expect(capture.service.isRunning)
            #expect(recording.result.resultCode == .success && recording.result.reason == .end)
            let frames = recording.result.framesCaptured
            #expect(frames >= 3200)
            if delivery == "signals" {
                #expect(recording.bytes.count == Int(frames) * 2)
                #expect(recording.bytes == Array(input.prefix(recording.bytes.count)))
            } else {
                #expect(recording.chunks.isEmpty)
            }
        }
    }

    /// `Delivery` `stream` to its end by MaxDuration: the pipe carries every frame from its
    /// opening to the last, and `FramesCaptured` is MaxDuration's to the frame (its last
    /// read, 480 of a period's 800 frames, cut short).
    @Test func aStreamRunsToMaxDurationToTheFrame() async throws {
        let input = CaptureFixture.pattern(400_000)
        try await CaptureFixture.with(input: input, pace: "realtime") { capture in
            var streamed: [UInt8] = []
            let request = CaptureFixture.request(maxMs: 3030) { $0.chunkMs = 50; $0.delivery = .stream }
            let recording = try await capture.record(request) { passThru in
                let fd = try await CaptureFixture.openStream(passThru)
                await CaptureFixture.read(try #require(fd.rawValue), into: &streamed)
            }
            #expect(recording.result.resultCode == .success && recording.result.reason == .timeout)
            #expect(recording.result.framesCaptured == 48480)
            #expect(recording.result.durationMs == 3030)
            #expect(recording.chunks.isEmpty)
            // Opened long before the end; the tail of what was captured, to the last byte.
            #expect(streamed.count >= 32000, "\(streamed.count) bytes streamed")
            #expect(streamed.count <= 96960 && Array(input[(96960 - streamed.count)..<96960]) == streamed)
        }
    }

    /// A second `OpenStream` while the first is read: from then on both carry the same
    /// audio, to the end.
    @Test func aSecondStreamCarriesWhatTheFirstDoes() async throws {
        let input = CaptureFixture.pattern(400_000)
        try await CaptureFixture.with(input: input, pace: "realtime") { capture in
            var first: [UInt8] = []
            var second: [UInt8] = []
            let request = CaptureFixture.request(maxMs: 60_000) { $0.chunkMs = 50; $0.delivery = .stream }
            let recording = try await capture.record(request) { passThru in
                let one = try await CaptureFixture.openStream(passThru)
                await CaptureFixture.read(try #require(one.rawValue), into: &first, atLeast: 8000)
                let two = try await CaptureFixture.openStream(passThru)
                await CaptureFixture.read(try #require(two.rawValue), into: &second, atLeast: 8000)
                try await passThru.end()
                await CaptureFixture.read(try #require(one.rawValue), into: &first)
                await CaptureFixture.read(try #require(two.rawValue), into: &second)
            }
            #expect(recording.result.resultCode == .success && recording.result.reason == .end)
            let captured = Int(recording.result.framesCaptured) * 2
            #expect(second.count >= 8000 && first.count > second.count)
            #expect(captured >= first.count && Array(input[(captured - first.count)..<captured]) == first)
            #expect(Array(first.suffix(second.count)) == second)
        }
    }
}
