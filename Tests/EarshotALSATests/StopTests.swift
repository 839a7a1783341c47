import EarshotSync
import Glibc
import Testing
@testable import EarshotALSA

@Suite("Stopping capture streams")
struct StopTests {
    let devices = TestDevices.shared
    let format = PCMFormat(sampleRate: 16000, channels: 1, bitsPerSample: 16)

    @Test func stopDuringARealtimeWaitIsPrompt() async throws {
        // Half-second periods: after the first one the reading thread sleeps ~0.5 s.
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 8000, pacing: .realtime)
        let recorder = CaptureRecorder(bytesPerFrame: 2)
        recorder.start(stream)
        #expect(await eventually { recorder.callbacks >= 1 })
        try await Task.sleep(for: .milliseconds(20))

        let before = ContinuousClock.now
        stream.stop()
        let took = ContinuousClock.now - before
        #expect(took < .milliseconds(100), "stop took \(took)")
        // stop returned after onEnd(nil), exactly once.
        let recorded = recorder.snapshot
        #expect(recorded.ends.count == 1)
        #expect(recorded.ends.first == .some(nil))
        // Usually one period; more only if this test was held up for over half a second.
        #expect(recorded.callbacks >= 1)
        #expect(recorded.dataAfterEnd == 0)

        // Again: harmless, and no second onEnd.
        let again = ContinuousClock.now
        stream.stop()
        #expect(ContinuousClock.now - again < .milliseconds(100))
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorder.snapshot.ends.count == 1)
        #expect(stream.framesRead == UInt64(recorder.snapshot.frames))
    }

    @Test func aDrainingStopDeliversWhatWasHeardSinceTheLastPeriod() async throws {
        // One-second periods, paced: the first period comes after a second; a draining stop
        // 300 ms later hands over the ~300 ms heard since, a plain stop would hand nothing.
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 16000, pacing: .realtime)
        let recorder = CaptureRecorder(bytesPerFrame: 2)
        let started = ContinuousClock.now
        recorder.start(stream)
        #expect(await eventually(timeout: .seconds(5)) { recorder.callbacks >= 1 })
        let firstPeriodSeen = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(300))
        let before = ContinuousClock.now
        stream.stop(draining: true)
        let after = ContinuousClock.now
        #expect(after - before < .milliseconds(100), "a draining stop took \(after - before)")
        let recorded = recorder.snapshot
        #expect(recorded.ends.count == 1)
        #expect(recorded.ends.first == .some(nil))
        #expect(recorded.dataAfterEnd == 0)
        #expect(recorded.sizeMismatches == 0)
        // Heard after the first period: at least the 300 ms slept since it was seen, at most
        // all the time since the stream started, less that first second.
        let drained = recorded.frames - 16000
        let upper = Int((after - started) / .milliseconds(1)) * 16 - 16000 + 16
        #expect(drained >= 300 * 16 && drained <= upper, "drained \(drained) frames; first period seen \(firstPeriodSeen - started) after the start")
        #expect(stream.framesRead == UInt64(recorded.frames))
        // The same input, in order, without a gap.
        #expect(recorded.bytes == Array(devices.infileBytes.prefix(recorded.bytes.count)))

        // Stopped already: a second draining stop reads nothing.
        stream.stop(draining: true)
        #expect(recorder.snapshot.frames == recorded.frames)
        #expect(recorder.snapshot.ends.count == 1)
    }

    @Test func aPlainStopDeliversNothingMore() async throws {
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 16000, pacing: .realtime)
        let recorder = CaptureRecorder(bytesPerFrame: 2)
        recorder.start(stream)
        #expect(await eventually(timeout: .seconds(5)) { recorder.callbacks >= 1 })
        try await Task.sleep(for: .milliseconds(300))
        stream.stop()
        // Whole periods up to the stop (on a loaded machine, the sleep may have outlasted
        // the second), and nothing after it, not even the next period when it falls due.
        let stopped = recorder.snapshot.frames
        #expect(stopped >= 16000 && stopped % 16000 == 0)
        try await Task.sleep(for: .milliseconds(1200))
        #expect(recorder.snapshot.frames == stopped && recorder.snapshot.ends.count == 1)
    }

    @Test func aDrainingStopBeforeStartReadsNothing() async throws {
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 160, pacing: .device)
        stream.stop(draining: true)
        let recorder = CaptureRecorder(bytesPerFrame: 2)
        recorder.start(stream)
        #expect(recorder.snapshot.callbacks == 0)
        #expect(recorder.snapshot.ends.count == 1)
    }

    @Test func stopWhileReadingLongCaptureIsPrompt() async throws {
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 160, pacing: .realtime)
        let recorder = CaptureRecorder(bytesPerFrame: 2)
        recorder.start(stream)
        #expect(await eventually { recorder.callbacks >= 5 })
        let before = ContinuousClock.now
        stream.stop()
        let took = ContinuousClock.now - before
        #expect(took < .milliseconds(100), "stop took \(took)")
        let recorded = recorder.snapshot
        #expect(recorded.ends.count == 1)
        #expect(recorded.ends.first == .some(nil))
        #expect(recorded.dataAfterEnd == 0)
        #expect(recorded.bytes == Array(devices.infileBytes.prefix(recorded.bytes.count)))
    }

    @Test func concurrentStopsAllReturnAfterTheEnd() async throws {
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 160, pacing: .realtime)
        let recorder = CaptureRecorder(bytesPerFrame: 2)
        recorder.start(stream)
        #expect(await eventually { recorder.callbacks >= 2 })
        let endsSeen = Locked<[Int]>([])
        await withTaskGroup(of: Void.self) { group in
            for _ in 0 ..< 4 {
                group.addTask {
                    stream.stop()
                    let ends = recorder.snapshot.ends.count
                    endsSeen.withLock { $0.append(ends) }
                }
            }
        }
        #expect(endsSeen.withLock { $0 } == [1, 1, 1, 1])
    }

    @Test func stopFromInsideOnDataDoesNotDeadlock() async throws {
        // Device pacing: data arrives as fast as it is read; onData stops at the 5th period.
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 160, pacing: .device)
        let recorder = CaptureRecorder(bytesPerFrame: 2, stopAfterFrames: 5 * 160)
        recorder.start(stream)
        #expect(await eventually { recorder.ended })
        let recorded = recorder.snapshot
        #expect(recorded.callbacks == 5)
        #expect(recorded.dataAfterStopRequest == 0)
        #expect(recorded.ends.first == .some(nil))
        stream.stop()
        #expect(recorder.snapshot.ends.count == 1)
    }

    @Test func aDrainingStopOfASourceThatNeverRunsDryEnds() async throws {
        // Device pacing on the file microphone (a `file` PCM over `null`): frames are always
        // there to read, before its input's end and after it. A draining stop takes at most
        // what a device's buffer holds, then ends; it does not read for ever.
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 160, pacing: .device)
        let recorder = CaptureRecorder(bytesPerFrame: 2, stopAfterFrames: 5 * 160, drainingStop: true)
        recorder.start(stream)
        // (Not ended: the reading thread is still draining, and a stop from here would wait
        // for it for ever.)
        guard await eventually(timeout: .seconds(5), { recorder.ended }) else {
            Issue.record("the draining stop did not end the stream: \(recorder.snapshot.framesAfterStopRequest) frames drained so far")
            return
        }
        let recorded = recorder.snapshot
        #expect(recorded.ends.first == .some(nil))
        #expect(recorded.framesAfterStopRequest > 0, "nothing was drained")
        #expect(recorded.framesAfterStopRequest <= Int(stream.grantedBufferFrames),
                "drained \(recorded.framesAfterStopRequest) frames, more than the \(stream.grantedBufferFrames)-frame buffer")
        #expect(recorded.sizeMismatches == 0)
        stream.stop()
    }

    @Test func stopFromInsideOnEndDoesNotDeadlock() async throws {
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 160, pacing: .device)
        let ends = Locked(0)
        stream.start(onData: { _, _, _ in stream.stop() },
                     onEnd: { _ in
                         stream.stop()
                         ends.withLock { $0 += 1 }
                     })
        #expect(await eventually { ends.withLock { $0 } == 1 })
        stream.stop()
        #expect(ends.withLock { $0 } == 1)
    }

    @Test func stopBeforeStartClosesAndStartThenEndsAtOnce() async throws {
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 160, pacing: .device)
        stream.stop()
        stream.stop()
        let recorder = CaptureRecorder(bytesPerFrame: 2)
        recorder.start(stream)
        let recorded = recorder.snapshot
        #expect(recorded.ends.count == 1)
        #expect(recorded.ends.first == .some(nil))
        #expect(recorded.callbacks == 0)
    }

    @Test func aSecondStartIsIgnored() async throws {
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 160, pacing: .realtime)
        let first = CaptureRecorder(bytesPerFrame: 2)
        let second = CaptureRecorder(bytesPerFrame: 2)
        first.start(stream)
        second.start(stream)
        #expect(await eventually { first.callbacks >= 2 })
        stream.stop()
        #expect(first.snapshot.ends.count == 1)
        #expect(second.snapshot.callbacks == 0)
        #expect(second.snapshot.ends.isEmpty)
    }

    @Test func releasingARunningStreamStopsIt() async throws {
        let ends = Locked<[ALSAError?]>([])
        let callbacks = Locked(0)
        do {
            let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 160, pacing: .realtime)
            // The callbacks do not hold the stream, so dropping it here runs deinit.
            stream.start(onData: { _, _, _ in callbacks.withLock { $0 += 1 } },
                         onEnd: { error in ends.withLock { $0.append(error) } })
            #expect(await eventually { callbacks.withLock { $0 } >= 2 })
            #expect(stream.framesRead >= 320)  // the last use: the stream is released after this
        }
        #expect(await eventually { !ends.withLock { $0 }.isEmpty })
        #expect(ends.withLock { $0 }.count == 1)
        #expect(ends.withLock { $0 }.first == .some(nil))
    }
}
