@testable import EarshotALSA
import EarshotSync
import Glibc
import Testing

/// PlaybackStream on ALSA `file` PCMs over `null`, named inline (`file:'PATH',raw`) through
/// the `pcm.file` definition in the system's alsa.conf. No `ALSA_CONFIG_PATH` is set here:
/// all test targets run in one process, and EarshotALSATests points that variable at its own
/// configuration, which a second configuration would replace.
@Suite("ALSA playback streams")
struct PlaybackStreamTests {
    let mono = PCMFormat(sampleRate: 22050, channels: 1, bitsPerSample: 16)

    static func speaker(_ path: String) -> String { "file:'\(path)',raw" }

    /// Deterministic pseudo-random samples.
    static func noise(_ count: Int, seed: UInt64) -> [Int16] {
        var state = seed | 1
        return (0 ..< count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int16(truncatingIfNeeded: state >> 20)
        }
    }

    static func bytes(_ samples: [Int16]) -> [UInt8] {
        samples.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
    }

    @Test func queuedSegmentsReachTheDeviceInOrder() async throws {
        let files = TestFiles()
        defer { files.remove() }
        let out = files.path("out.raw")
        let stream = try PlaybackStream(device: Self.speaker(out), format: mono)
        let segments = [Self.noise(5000, seed: 1), Self.noise(22050, seed: 2), Self.noise(777, seed: 3)]
        for segment in segments { #expect(stream.enqueue(segment)) }
        stream.finish()
        let recorder = PlaybackRecorder()
        let before = monotonicMicroseconds()
        recorder.start(stream)
        #expect(await eventually { recorder.snapshot.ends.count == 1 })
        let recorded = recorder.snapshot
        #expect(recorded.ends.first == .some(nil))
        #expect(recorded.firstFrames.count == 1)
        #expect(recorded.firstFrames.first.map { $0 >= before && $0 <= monotonicMicroseconds() } == true)
        let total = segments.reduce(0) { $0 + $1.count }
        #expect(stream.framesWritten == UInt64(total))
        #expect(files.readBytes(out) == Self.bytes(segments.flatMap { $0 }))
        #expect(!stream.enqueue([1, 2, 3]))
    }

    @Test func segmentsQueuedWhilePlayingFollow() async throws {
        let files = TestFiles()
        defer { files.remove() }
        let out = files.path("out.raw")
        let stream = try PlaybackStream(device: Self.speaker(out), format: mono, pacing: .realtime)
        let first = Self.noise(4410, seed: 4)   // 0.2 s
        let second = Self.noise(6615, seed: 5)  // 0.3 s
        stream.enqueue(first)
        let recorder = PlaybackRecorder()
        recorder.start(stream)
        #expect(await eventually { !recorder.snapshot.firstFrames.isEmpty })
        #expect(stream.enqueue(second))
        try await Task.sleep(for: .milliseconds(50))
        stream.finish()
        #expect(await eventually { recorder.snapshot.ends.count == 1 })
        #expect(recorder.snapshot.ends.first == .some(nil))
        #expect(recorder.snapshot.firstFrames.count == 1)
        #expect(files.readBytes(out) == Self.bytes(first + second))
    }

    @Test func stereoFramesAreInterleaved() async throws {
        let files = TestFiles()
        defer { files.remove() }
        let out = files.path("stereo.raw")
        let stereo = PCMFormat(sampleRate: 48000, channels: 2, bitsPerSample: 16)
        let stream = try PlaybackStream(device: Self.speaker(out), format: stereo)
        let samples = Self.noise(9601, seed: 6) // an odd count: the last frame is completed with 0
        stream.enqueue(samples)
        stream.finish()
        let recorder = PlaybackRecorder()
        recorder.start(stream)
        #expect(await eventually { recorder.snapshot.ends.count == 1 })
        #expect(stream.framesWritten == 4801)
        #expect(files.readBytes(out) == Self.bytes(samples + [0]))
    }

    @Test func stopIsPromptAndIdempotent() async throws {
        let files = TestFiles()
        defer { files.remove() }
        let out = files.path("out.raw")
        let stream = try PlaybackStream(device: Self.speaker(out), format: mono, pacing: .realtime)
        // A minute: far more than a busy test run (ThreadSanitizer on two cores) can let
        // play before this task runs again.
        let long = Array(repeating: Self.noise(22050 * 10, seed: 7), count: 6).flatMap { $0 }
        stream.enqueue(long)
        stream.finish()
        let recorder = PlaybackRecorder()
        recorder.start(stream)
        #expect(await eventually { !recorder.snapshot.firstFrames.isEmpty })
        try await Task.sleep(for: .milliseconds(100))

        let writtenBefore = stream.framesWritten
        let before = ContinuousClock.now
        stream.stop()
        let took = ContinuousClock.now - before
        #expect(took < .milliseconds(100), "stop took \(took)")
        #expect(recorder.snapshot.ends.count == 1)
        #expect(recorder.snapshot.ends.first == .some(nil))

        let again = ContinuousClock.now
        stream.stop()
        #expect(ContinuousClock.now - again < .milliseconds(50))
        #expect(!stream.enqueue([1]))
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorder.snapshot.ends.count == 1)
        // Only what was written before the stop (at most one buffer more than the device
        // had accepted when stop was called), a prefix of what was queued. How much that is
        // depends on how soon this task ran again after the first frame, so it is measured
        // against the stream's own count, not against a wall-clock guess.
        let written = files.readBytes(out)
        #expect(written.count / 2 <= Int(writtenBefore) + Int(stream.grantedBufferFrames),
                "\(written.count) bytes in the file, \(writtenBefore) frames accepted before the stop")
        #expect(written.count < long.count * 2, "the stop came before the end of the minute")
        #expect(written == Array(Self.bytes(long).prefix(written.count)))
    }

    @Test func stopBeforeStartClosesAndStartThenEnds() async throws {
        let files = TestFiles()
        defer { files.remove() }
        let stream = try PlaybackStream(device: Self.speaker(files.path("never.raw")), format: mono)
        stream.enqueue(Self.noise(100, seed: 8))
        stream.stop()
        let recorder = PlaybackRecorder()
        recorder.start(stream)
        #expect(recorder.snapshot.ends.count == 1)
        #expect(recorder.snapshot.ends.first == .some(nil))
        #expect(recorder.snapshot.firstFrames.isEmpty)
    }

    @Test func idleStreamWaitsForSegments() async throws {
        let files = TestFiles()
        defer { files.remove() }
        let out = files.path("out.raw")
        let stream = try PlaybackStream(device: Self.speaker(out), format: mono)
        let recorder = PlaybackRecorder()
        recorder.start(stream)
        try await Task.sleep(for: .milliseconds(100))
        #expect(recorder.snapshot.ends.isEmpty)
        #expect(recorder.snapshot.firstFrames.isEmpty)
        let segment = Self.noise(3000, seed: 9)
        stream.enqueue(segment)
        stream.finish()
        #expect(await eventually { recorder.snapshot.ends.count == 1 })
        #expect(recorder.snapshot.firstFrames.count == 1)
        #expect(files.readBytes(out) == Self.bytes(segment))
    }

    @Test func unknownDeviceAndUnsupportedFormat() throws {
        #expect {
            try PlaybackStream(device: "earshot_no_such_speaker", format: mono)
        } throws: { error in
            guard let error = error as? PlaybackError, case .cannotOpen(let device, _) = error else { return false }
            return device == "earshot_no_such_speaker"
                && error.description.hasPrefix("cannot open ALSA device 'earshot_no_such_speaker' for playback: ")
        }
        let eightBit = PCMFormat(sampleRate: 22050, channels: 1, bitsPerSample: 8)
        #expect {
            try PlaybackStream(device: "null", format: eightBit)
        } throws: { error in
            guard case .unsupported = error as? PlaybackError else { return false }
            return true
        }
    }
}

/// What a playback stream's callbacks reported.
final class PlaybackRecorder: Sendable {
    struct Snapshot: Sendable {
        var firstFrames: [UInt64] = []
        var ends: [PlaybackError?] = []
    }

    private let lock = Locked(Snapshot())

    var snapshot: Snapshot { lock.withLock { $0 } }

    func start(_ stream: PlaybackStream) {
        stream.start(
            onFirstFrame: { time in self.lock.withLock { $0.firstFrames.append(time) } },
            onEnd: { error in self.lock.withLock { $0.ends.append(error) } })
    }
}

func monotonicMicroseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
}

/// Polls `condition` every few milliseconds until it holds or `timeout` passes.
func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}
