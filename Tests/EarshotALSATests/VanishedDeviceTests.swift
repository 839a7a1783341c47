import CALSA
import Glibc
import Testing
@testable import EarshotALSA

/// What happens when a device goes away.
///
/// Without kernel sound devices nothing here can make libasound report `-ENODEV` or a
/// DISCONNECTED state by itself: alsa-lib 1.2.8's `file` plugin ignores errors and end of
/// file on its input file, and `null` never fails. So the tests cover
/// - the mapping from libasound's codes and states to what the reading thread does
///   (`classify`), for every code the kernel uses for a vanished device;
/// - the reading thread's recovery and ending paths end to end, with real libasound calls
///   injected on the reading thread (`snd_pcm_drop`: a bad state a prepare cures;
///   `snd_pcm_drop` + `snd_pcm_hw_free`: a bad state nothing cures, as after a disconnect);
/// - what unplugging a configured device really does: the open stream goes on reading,
///   new opens fail with `.cannotOpen`.
@Suite("Vanished devices")
struct VanishedDeviceTests {
    let devices = TestDevices.shared
    let format = PCMFormat(sampleRate: 16000, channels: 1, bitsPerSample: 16)

    @Test func classification() {
        let running = SND_PCM_STATE_RUNNING
        #expect(classify(errorCode: -EAGAIN, state: running) == .retry)
        #expect(classify(errorCode: -EINTR, state: running) == .retry)
        #expect(classify(errorCode: -EPIPE, state: SND_PCM_STATE_XRUN) == .recoverOverrun)
        #expect(classify(errorCode: -ESTRPIPE, state: SND_PCM_STATE_SUSPENDED) == .recoverSuspend)
        #expect(classify(errorCode: -ENODEV, state: running) == .deviceGone)
        #expect(classify(errorCode: -EBADFD, state: SND_PCM_STATE_SETUP) == .prepareOrGone)
        #expect(classify(errorCode: -EIO, state: running) == .prepareOrGone)
        #expect(classify(errorCode: -EINVAL, state: running) == .fatal)
        #expect(classify(errorCode: -ENOMEM, state: running) == .fatal)
        // A disconnected PCM is gone whatever the code says.
        for code in [-EPIPE, -ESTRPIPE, -EBADFD, -EIO, -EAGAIN, -EINVAL] {
            #expect(classify(errorCode: code, state: SND_PCM_STATE_DISCONNECTED) == .deviceGone)
        }
    }

    @Test func errorDescriptionsNameDeviceAndCause() {
        #expect(ALSAError.deviceGone(device: "hw:1", message: alsaMessage(-ENODEV)).description
            == "ALSA device 'hw:1' is gone: No such device")
        #expect(ALSAError.io(device: "hw:1", code: -EINVAL, message: alsaMessage(-EINVAL)).description
            == "ALSA capture on 'hw:1' failed (error -22): Invalid argument")
        #expect(ALSAError.unsupported(device: "hw:1", message: "x").description
            == "ALSA device 'hw:1' cannot capture as requested: x")
        #expect(ALSAError.cannotOpen(device: "hw:1", message: "y").device == "hw:1")
    }

    @Test func aBadStateThatPrepareCuresIsRecovered() async throws {
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 160, pacing: .device)
        let recorder = CaptureRecorder(bytesPerFrame: 2, stopAfterFrames: 50 * 160) { callback in
            if callback == 10 { stream.loop.inject(.drop) }
        }
        recorder.start(stream)
        #expect(await eventually { recorder.ended })
        let recorded = recorder.snapshot
        #expect(recorded.ends.first == .some(nil))
        #expect(stream.recoveries == 1)
        #expect(recorded.frames == 50 * 160)
        // Dropping and preparing loses nothing of the file: its read position is untouched.
        #expect(recorded.bytes == Array(devices.infileBytes.prefix(recorded.bytes.count)))
    }

    @Test func aBadStateThatNothingCuresEndsTheStreamAsGone() async throws {
        let stream = try CaptureStream(device: TestDevices.mic, format: format, periodFrames: 160, pacing: .device)
        let recorder = CaptureRecorder(bytesPerFrame: 2) { callback in
            if callback == 3 { stream.loop.inject(.hardwareFree) }
        }
        recorder.start(stream)
        #expect(await eventually { recorder.ended })
        let recorded = recorder.snapshot
        #expect(recorded.dataAfterEnd == 0)
        #expect(recorded.callbacks == 3)
        #expect(stream.framesRead == 3 * 160)
        let ended = try #require(recorded.ends.first ?? nil)
        guard case .deviceGone(let device, let message) = ended else {
            Issue.record("expected .deviceGone, got \(ended)")
            return
        }
        #expect(device == TestDevices.mic)
        #expect(message.contains("prepare failed"), "\(message)")
        #expect(ended.description.hasPrefix("ALSA device '\(TestDevices.mic)' is gone: "))
        // Stopping an ended stream is harmless and ends nothing twice.
        stream.stop()
        #expect(recorder.snapshot.ends.count == 1)
    }

    @Test func unpluggingByConfigurationStopsNewOpensNotTheOpenStream() async throws {
        let stream = try CaptureStream(device: TestDevices.unpluggable, format: format, periodFrames: 160, pacing: .realtime)
        let recorder = CaptureRecorder(bytesPerFrame: 2)
        recorder.start(stream)
        #expect(await eventually { recorder.callbacks >= 3 })

        devices.unplug()
        let callbacksAtUnplug = recorder.snapshot.callbacks

        // libasound notices the new configuration file on the next open.
        #expect(throws: ALSAError.self) { try CaptureDevice.probe(TestDevices.unpluggable) }
        do {
            _ = try CaptureStream(device: TestDevices.unpluggable, format: format, periodFrames: 160, pacing: .device)
            Issue.record("the unplugged device opened")
        } catch {
            guard case .cannotOpen(let device, let message) = error else {
                Issue.record("expected .cannotOpen, got \(error)")
                return
            }
            #expect(device == TestDevices.unpluggable)
            #expect(message.contains("Unknown PCM"), "\(message)")
        }

        // The open stream neither notices nor ends: its input file stays readable though
        // deleted, and the file plugin ignores read errors anyway.
        #expect(await eventually { recorder.callbacks >= callbacksAtUnplug + 5 })
        #expect(recorder.snapshot.ends.isEmpty)
        stream.stop()
        let recorded = recorder.snapshot
        #expect(recorded.ends.count == 1)
        #expect(recorded.ends.first == .some(nil))
        #expect(recorded.bytes == Array(devices.infileBytes.prefix(recorded.bytes.count)))
    }
}
