import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

/// The microphone goes away in the middle of a pass-thru, as a USB microphone pulled out
/// does (a real ALSA PCM, loaded by the service's libasound, turns DISCONNECTED and its
/// reads fail with -ENODEV). The pass-thru ends with `GENERIC_ERROR` (`device-error`) and
/// its owner is told; the service stays up, refuses pass-thrus on the missing device with
/// a clear error, and records again once it has a working input.
@Suite(.timeLimit(.minutes(3))) struct UnpluggedMicrophoneTests {
    /// A pass-thru's chunks as they arrive, and its result, read with time limits.
    struct Recording {
        let passThru: PassThru
        let chunks: Arrivals<AudioChunk>

        init(_ passThru: PassThru) {
            self.passThru = passThru
            chunks = Arrivals(passThru)
        }

        /// The audio of the chunks that arrive until `enough` bytes have, or the pass-thru ends.
        func audio(until enough: Int = .max) async throws -> [UInt8] {
            var audio: [UInt8] = []
            while audio.count < enough {
                guard let chunk = await chunks.next(within: .seconds(15)) else {
                    if enough == .max { break }
                    throw HarnessError("\(passThru.path) went quiet after \(audio.count) bytes")
                }
                audio += chunk.data
            }
            return audio
        }
    }

    @Test func theMicrophoneIsPulledOutMidCapture() async throws {
        try await ServiceStack.with(["earshot-session"]) { stack in
            let input = stack.file("microphone.raw")
            let microphone = try UnpluggableMicrophone("usb_mic", infile: input, in: stack)
            let capture = try await stack.launch("earshot-capture", arguments: ["--device", microphone.name, "--pace", "realtime",
                                                                                "--linger-seconds", "5"])
            let client = stack.client
            let recording = Recording(try await client.earshot.capture.perform(AudioPassThruRequest(maxDurationMs: 20000)))
            // The plugin really serves the file: 0.3 s of it, byte for byte.
            let before = try await recording.audio(until: 9600)

            microphone.unplug()
            let after = try await recording.audio()
            let result = try await recording.passThru.result
            #expect(result.resultCode == .genericError && !result.success)
            #expect(result.reason == .deviceError, "\(result)")
            let audio = before + after
            #expect(audio == Array(stack.microphone.prefix(audio.count)))
            #expect(result.framesCaptured == UInt64(audio.count / 2))
            #expect(try await recording.passThru.read(.resultCode) == .genericError)
            #expect(try await client.earshot.capture.active() == nil)
            #expect(capture.logText.contains("is gone"), "\(capture.logText.suffix(1500))")
            #expect(capture.isRunning)

            // Still unplugged: refused at once, naming the device.
            let refused = await expectDBusError(EarshotErrorName.genericError.name) {
                _ = try await client.earshot.capture.start(AudioPassThruRequest(maxDurationMs: 500))
            }
            #expect(refused?.message.contains(microphone.name) == true, "\(String(describing: refused))")

            // The session names a working input: the next pass-thru records from it.
            try await client.earshot.session.setDesiredState(DesiredSessionState(category: "record", preferredInput: "mic"))
            let next = Recording(try await client.earshot.capture.perform(AudioPassThruRequest(maxDurationMs: 500)))
            let recorded = try await next.audio()
            #expect(try await next.passThru.result.resultCode == .success)
            #expect(recorded == Array(stack.microphone.prefix(16000)))
            #expect(capture.isRunning)
        }
    }
}
