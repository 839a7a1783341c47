import Glibc
import Testing
@testable import EarshotALSA
import EarshotSync

/// Reads written straight to a consumer's descriptors by the reading thread.
@Suite("Writing reads straight to pipes")
struct DirectWritesTests {
    let devices = TestDevices.shared
    let format = PCMFormat(sampleRate: 16000, channels: 1, bitsPerSample: 16)

    /// Captures from `stream` with a consumer answering `answers` first, until `onData` has
    /// had `frames` frames (the recorder then stops the stream).
    private func capture(_ stream: CaptureStream, answers: [(descriptors: [Int32], framesLeft: UInt64)],
                         untilOnDataHas frames: Int) async -> (ScriptedConsumer, CaptureRecorder) {
        let consumer = ScriptedConsumer(answers: answers)
        let recorder = CaptureRecorder(bytesPerFrame: 2, stopAfterFrames: frames)
        recorder.start(stream, direct: consumer)
        #expect(await eventually { recorder.ended })
        stream.stop()
        return (consumer, recorder)
    }

    @Test func readsAfterTheFirstGoToThePipeUpToTheLimitThenToOnData() async throws {
        let pipe = try TestPipe(size: 1 << 20)
        defer { pipe.close() }
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 160, pacing: .device)
        // 50 reads and 50 frames of the 51st, whose other 110 frames are dropped.
        let (consumer, recorder) = await capture(stream, answers: [([pipe.writer], 8050)], untilOnDataHas: 1760)
        let infile = devices.infileBytes
        let recorded = recorder.snapshot
        #expect(consumer.reports == [.init(frames: 8050, unfinished: nil)])
        #expect(consumer.asked == 1 && consumer.counter.value == 8050)
        #expect(pipe.drain() == Array(infile[320 ..< 320 + 16100]))
        // onData: the first read (with its time), then the reads after the limit's.
        #expect(recorded.frames == 1760 && recorded.timestamps.first.map { $0 > 0 } == true)
        #expect(Array(recorded.bytes.prefix(320)) == Array(infile.prefix(320)))
        #expect(Array(recorded.bytes.dropFirst(320)) == Array(infile[16640 ..< 16640 + 3200]))
        #expect(stream.framesRead == 1760 + 51 * 160)
    }

    /// The first descriptor takes the read, the second only what fits: the read is handed
    /// back with how far each got, and reads go to onData again.
    @Test func aPipeThatTakesAReadInPartHandsItBack() async throws {
        let roomy = try TestPipe(size: 1 << 20)
        let small = try TestPipe(size: 4096)
        defer {
            roomy.close()
            small.close()
        }
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 2400, pacing: .device)
        let period = Int(stream.grantedPeriodFrames)
        try #require(period * 2 > 4096, "a read must be larger than the small pipe")
        let (consumer, recorder) = await capture(stream, answers: [([roomy.writer, small.writer], 1_000_000)],
                                                 untilOnDataHas: 2 * period)
        let infile = devices.infileBytes
        let read = Array(infile[(period * 2) ..< (period * 4)])
        #expect(consumer.reports == [.init(frames: 0, unfinished: UnfinishedWrite(
            bytes: read, frames: UInt64(period), index: 1, written: 4096, error: 0))])
        #expect(roomy.drain() == read)
        #expect(small.drain() == Array(read.prefix(4096)))
        #expect(Array(recorder.snapshot.bytes.dropFirst(period * 2).prefix(period * 2)) == Array(infile[(period * 4) ..< (period * 6)]))
    }

    @Test func aPipeWhoseReaderWentAwayHandsTheReadBackWithItsError() async throws {
        signal(SIGPIPE, SIG_IGN)
        let pipe = try TestPipe(size: 65536)
        _ = Glibc.close(pipe.reader)
        defer { _ = Glibc.close(pipe.writer) }
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 160, pacing: .device)
        let (consumer, _) = await capture(stream, answers: [([pipe.writer], 1_000_000)], untilOnDataHas: 320)
        #expect(consumer.reports == [.init(frames: 0, unfinished: UnfinishedWrite(
            bytes: Array(devices.infileBytes[320 ..< 640]), frames: 160, index: 0, written: 0, error: EPIPE))])
    }

    /// Paced by a clock (one read per turn of the loop): a redirect adds a pipe from the
    /// next read, and a draining stop writes what was heard since the last period.
    @Test func aRedirectTakesEffectAtTheNextReadAndAStopReportsTheRest() async throws {
        let first = try TestPipe(size: 1 << 20)
        let second = try TestPipe(size: 1 << 20)
        defer {
            first.close()
            second.close()
        }
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 160, pacing: .realtime)
        let consumer = ScriptedConsumer(answers: [([first.writer], 1_000_000), ([first.writer, second.writer], 1_000_000)])
        let recorder = CaptureRecorder(bytesPerFrame: 2)
        recorder.start(stream, direct: consumer)
        #expect(await eventually { consumer.counter.value >= 1600 })
        stream.redirect()
        #expect(await eventually { consumer.asked == 2 && consumer.reports.count == 1 })
        let before = consumer.counter.value
        #expect(await eventually { consumer.counter.value >= before + 1600 })
        stream.stop(draining: true)
        #expect(recorder.ended)
        let reports = consumer.reports
        try #require(reports.count == 2)
        #expect(reports.allSatisfy { $0.unfinished == nil })
        let written = reports[0].frames + reports[1].frames
        #expect(consumer.counter.value == written && stream.framesRead == 160 + written)
        let infile = devices.infileBytes
        let one = first.drain()
        let two = second.drain()
        #expect(one == Array(infile[320 ..< 320 + Int(written) * 2]))
        #expect(two.count == Int(reports[1].frames) * 2 && Array(one.suffix(two.count)) == two)
        #expect(recorder.snapshot.frames == 160)
    }
}

/// A direct consumer answering from a script, recording what it is told.
final class ScriptedConsumer: DirectCaptureConsumer {
    struct Report: Sendable, Equatable {
        var frames: UInt64
        var unfinished: UnfinishedWrite?
    }

    private struct State {
        var answers: [(descriptors: [Int32], framesLeft: UInt64)]
        var asked = 0
        var reports: [Report] = []
    }

    let counter = FrameCounter()
    private let state: Locked<State>

    init(answers: [(descriptors: [Int32], framesLeft: UInt64)]) {
        state = Locked(State(answers: answers))
    }

    var asked: Int { state.withLock { $0.asked } }
    var reports: [Report] { state.withLock { $0.reports } }

    func directWrites() -> DirectWrites? {
        state.withLock { state in
            state.asked += 1
            guard !state.answers.isEmpty else { return nil }
            let answer = state.answers.removeFirst()
            return DirectWrites(descriptors: answer.descriptors, framesLeft: answer.framesLeft, counter: counter)
        }
    }

    func directWritesStopped(frames: UInt64, unfinished: UnfinishedWrite?) {
        state.withLock { $0.reports.append(Report(frames: frames, unfinished: unfinished)) }
    }
}

/// A pipe of `size` bytes whose writing end does not block.
struct TestPipe {
    let reader: Int32
    let writer: Int32

    init(size: Int32) throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        reader = ends[0]
        writer = ends[1]
        _ = fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) | O_NONBLOCK)
        _ = fcntl(reader, F_SETFL, fcntl(reader, F_GETFL) | O_NONBLOCK)
        try #require(fcntl(writer, 1031 /* F_SETPIPE_SZ */, size) >= size)
    }

    /// Everything the pipe holds.
    func drain() -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(reader, &buffer, buffer.count)
            if n <= 0 { return bytes }
            bytes += buffer[0 ..< n]
        }
    }

    func close() {
        _ = Glibc.close(reader)
        _ = Glibc.close(writer)
    }
}
