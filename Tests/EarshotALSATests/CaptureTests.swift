import Glibc
import Testing
@testable import EarshotALSA
import EarshotSync

@Suite("Capturing from file microphones")
struct CaptureTests {
    let devices = TestDevices.shared

    /// Captures until `frames` frames arrived (the recorder stops the stream from `onData`)
    /// and returns what was recorded.
    /// Also returns the CLOCK_MONOTONIC µs right before `start`, to compare with the
    /// reading thread's timestamps (which, unlike the test's own clock readings, do not
    /// depend on how busy the cooperative pool is).
    private func capture(_ device: String, _ format: PCMFormat, frames: Int, periodFrames: UInt32 = 160,
                         pacing: CapturePacing = .device, timestamps: CaptureTimestamps = .everyRead) async throws
        -> (CaptureStream, CaptureRecorder.Snapshot, startedAt: UInt64) {
        let stream = try CaptureStream(device: device, format: format, periodFrames: periodFrames, pacing: pacing)
        let recorder = CaptureRecorder(bytesPerFrame: format.bytesPerFrame, stopAfterFrames: frames)
        let startedAt = monotonicMicroseconds()
        recorder.start(stream, timestamps: timestamps)
        #expect(await eventually { recorder.ended })
        stream.stop()
        return (stream, recorder.snapshot, startedAt)
    }

    /// Seconds from `startedAt` to the last delivery.
    private func secondsToLastDelivery(_ recorded: CaptureRecorder.Snapshot, since startedAt: UInt64) throws -> Double {
        let last = try #require(recorded.timestamps.last)
        return Double(last - startedAt) / 1e6
    }

    private func expectPlainCapture(_ stream: CaptureStream, _ recorded: CaptureRecorder.Snapshot,
                                    frames: Int, periodFrames: Int) {
        // Whole periods, stopped from onData at the first period reaching `frames`.
        let expectedFrames = (frames + periodFrames - 1) / periodFrames * periodFrames
        #expect(recorded.frames == expectedFrames)
        #expect(recorded.callbacks == expectedFrames / periodFrames)
        #expect(stream.framesRead == UInt64(recorded.frames))
        #expect(recorded.bytes.count == recorded.frames * stream.format.bytesPerFrame)
        #expect(recorded.sizeMismatches == 0)
        #expect(recorded.ends.count == 1)
        #expect(recorded.ends.first == .some(nil))
        #expect(recorded.dataAfterEnd == 0)
        #expect(recorded.dataAfterStopRequest == 0)
        #expect(zip(recorded.timestamps, recorded.timestamps.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(stream.recoveries == 0)
    }

    @Test func sixteenBitMonoEqualsTheInputFile() async throws {
        let format = PCMFormat(sampleRate: 16000, channels: 1, bitsPerSample: 16)
        let (stream, recorded, _) = try await capture(TestDevices.mic, format, frames: 16000)
        #expect(stream.grantedPeriodFrames == 160)
        expectPlainCapture(stream, recorded, frames: 16000, periodFrames: 160)
        #expect(recorded.bytes == Array(devices.infileBytes.prefix(recorded.bytes.count)))
        // The timestamps are CLOCK_MONOTONIC microseconds of this process's recent past
        // (the margin allows for slow sanitizer builds).
        let now = monotonicMicroseconds()
        #expect(recorded.timestamps.last.map { $0 <= now && now - $0 < 60_000_000 } == true)
    }

    @Test func onlyTheFirstReadIsTimedWhenAskedSo() async throws {
        let format = PCMFormat(sampleRate: 16000, channels: 1, bitsPerSample: 16)
        let (_, recorded, startedAt) = try await capture(TestDevices.mic, format, frames: 1600, timestamps: .firstRead)
        #expect(recorded.frames == 1600 && recorded.callbacks == 10 && recorded.ends.count == 1)
        #expect(recorded.bytes == Array(devices.infileBytes.prefix(recorded.bytes.count)))
        // The first read's time, then none.
        #expect(recorded.timestamps.count == 10)
        #expect(recorded.timestamps.first.map { $0 >= startedAt && $0 <= monotonicMicroseconds() } == true)
        #expect(recorded.timestamps.dropFirst().allSatisfy { $0 == 0 })
    }

    @Test func eightBitEqualsTheInputFile() async throws {
        let format = PCMFormat(sampleRate: 8000, channels: 1, bitsPerSample: 8)
        let (stream, recorded, _) = try await capture(TestDevices.mic, format, frames: 8000, periodFrames: 80)
        expectPlainCapture(stream, recorded, frames: 8000, periodFrames: Int(stream.grantedPeriodFrames))
        #expect(recorded.bytes == Array(devices.infileBytes.prefix(recorded.bytes.count)))
    }

    @Test func strictMonoAndStereoDevicesDeliverTheInputFile() async throws {
        let mono = PCMFormat(sampleRate: 44100, channels: 1, bitsPerSample: 16)
        let (monoStream, monoRecorded, _) = try await capture(TestDevices.mono, mono, frames: 4410, periodFrames: 441)
        expectPlainCapture(monoStream, monoRecorded, frames: 4410, periodFrames: Int(monoStream.grantedPeriodFrames))
        #expect(monoRecorded.bytes == Array(devices.infileBytes.prefix(monoRecorded.bytes.count)))

        let stereo = PCMFormat(sampleRate: 48000, channels: 2, bitsPerSample: 16)
        let (stereoStream, stereoRecorded, _) = try await capture(TestDevices.stereo, stereo, frames: 4800, periodFrames: 480)
        expectPlainCapture(stereoStream, stereoRecorded, frames: 4800, periodFrames: Int(stereoStream.grantedPeriodFrames))
        #expect(stereoRecorded.bytes.count == 4800 * 4)
        #expect(stereoRecorded.bytes == Array(devices.infileBytes.prefix(stereoRecorded.bytes.count)))
    }

    @Test func pastTheEndOfItsFileAMicrophoneDeliversSilence() async throws {
        // The file plugin leaves the buffer untouched at end of file; the stream fills it with
        // the format's silence before each read, so no stale period repeats.
        let u8 = PCMFormat(sampleRate: 8000, channels: 1, bitsPerSample: 8)
        let (stream, recorded, _) = try await capture(TestDevices.short, u8, frames: 2000, periodFrames: 80)
        expectPlainCapture(stream, recorded, frames: 2000, periodFrames: Int(stream.grantedPeriodFrames))
        let length = TestDevices.shortInfileLength
        #expect(Array(recorded.bytes.prefix(length)) == Array(devices.infileBytes.prefix(length)))
        #expect(recorded.bytes.dropFirst(length).allSatisfy { $0 == 0x80 })

        let s16 = PCMFormat(sampleRate: 8000, channels: 1, bitsPerSample: 16)
        let (_, signed, _) = try await capture(TestDevices.short, s16, frames: 2000, periodFrames: 80)
        #expect(Array(signed.bytes.prefix(length)) == Array(devices.infileBytes.prefix(length)))
        #expect(signed.bytes.dropFirst(length).allSatisfy { $0 == 0 })
    }

    @Test func theNullDeviceDeliversSilence() async throws {
        // `null` writes nothing into the buffer; what arrives is the stream's silence fill.
        let s16 = PCMFormat(sampleRate: 16000, channels: 1, bitsPerSample: 16)
        let (_, signed, _) = try await capture(TestDevices.silence, s16, frames: 1600)
        #expect(signed.frames == 1600)
        #expect(signed.bytes.allSatisfy { $0 == 0 })

        let u8 = PCMFormat(sampleRate: 16000, channels: 1, bitsPerSample: 8)
        let (_, unsigned, _) = try await capture(TestDevices.silence, u8, frames: 1600)
        #expect(unsigned.frames == 1600)
        #expect(unsigned.bytes.allSatisfy { $0 == 0x80 }, "U8 silence is 0x80")
    }

    @Test func realtimePacingTakesRealTime() async throws {
        let format = PCMFormat(sampleRate: 16000, channels: 1, bitsPerSample: 16)
        let (stream, recorded, startedAt) = try await capture(TestDevices.mic, format, frames: 16000, pacing: .realtime)
        expectPlainCapture(stream, recorded, frames: 16000, periodFrames: 160)
        #expect(recorded.bytes == Array(devices.infileBytes.prefix(recorded.bytes.count)))
        let elapsed = try secondsToLastDelivery(recorded, since: startedAt)
        #expect(elapsed >= 0.95, "1 s of audio at real time took \(elapsed) s")
        #expect(elapsed < 3, "1 s of audio at real time took \(elapsed) s")
        // No period arrives before it has been "heard": the k-th 10 ms period comes at least
        // (k + 1) × 10 ms after the start. A busy machine can only make periods late (and a
        // late wake-up is caught up with several at once), never early; unpaced, all 100
        // would come within a few milliseconds.
        let early = recorded.timestamps.enumerated().filter { index, timestamp in
            timestamp < startedAt + UInt64(index + 1) * 10_000
        }
        #expect(early.isEmpty, "periods arrived before real time (period: ms): \(early.map { "\($0.offset): \(($0.element - startedAt) / 1000)" })")
    }

    @Test func devicePacingIsAsFastAsTheDevice() async throws {
        let format = PCMFormat(sampleRate: 16000, channels: 1, bitsPerSample: 16)
        let (stream, recorded, startedAt) = try await capture(TestDevices.mic, format, frames: 16000, pacing: .device)
        expectPlainCapture(stream, recorded, frames: 16000, periodFrames: 160)
        let elapsed = try secondsToLastDelivery(recorded, since: startedAt)
        #expect(elapsed < 0.5, "1 s of audio from a file took \(elapsed) s")
    }

    @Test func tenSecondsFromAFileTakeWellUnderASecond() async throws {
        let format = PCMFormat(sampleRate: 16000, channels: 1, bitsPerSample: 16)
        let (stream, recorded, startedAt) = try await capture(TestDevices.mic, format, frames: 160_000, pacing: .device)
        expectPlainCapture(stream, recorded, frames: 160_000, periodFrames: 160)
        #expect(recorded.bytes == Array(devices.infileBytes.prefix(recorded.bytes.count)))
        let elapsed = try secondsToLastDelivery(recorded, since: startedAt)
        #expect(elapsed < 0.5, "10 s of audio from a file took \(elapsed) s")
    }
}
