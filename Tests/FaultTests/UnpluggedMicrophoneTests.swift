import ContractCore
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
@Suite struct UnpluggedMicrophoneTests {
    static func request(maxMs: UInt32) -> DBusValue {
        .vardict([Capture.Keys.samplingRate.name: .uint32(16000), Capture.Keys.bitsPerSample.name: .uint32(16),
                  Capture.Keys.audioType.name: .string("PCM"), Capture.Keys.maxDuration.name: .uint32(maxMs)])
    }

    /// Chunks of `path` until `Finished` (its body), or until `enough` bytes when given.
    static func collect(_ signals: SignalSubscription, _ path: ObjectPath, until enough: Int? = nil) async throws
        -> (audio: [UInt8], finished: [DBusValue]?) {
        var audio: [UInt8] = []
        while let signal = await signals.next(timeout: .seconds(15)) {
            guard signal.path == path else { continue }
            if signal.member == PassThru.audioPassThru.name { audio += signal.body.first?.bytesValue ?? [] }
            if signal.member == PassThru.finished.name { return (audio, signal.body) }
            if let enough, audio.count >= enough { return (audio, nil) }
        }
        throw HarnessError("\(path) went quiet without Finished")
    }

    @Test func theMicrophoneIsPulledOutMidCapture() async throws {
        try await ServiceStack.with(["earshot-session"]) { stack in
            let input = stack.file("microphone.raw")
            let microphone = try UnpluggableMicrophone("usb_mic", infile: input, in: stack)
            let capture = try await stack.launch("earshot-capture", arguments: ["--device", microphone.name, "--pace", "realtime",
                                                                                "--linger-seconds", "5"])
            let client = stack.client
            let signals = try await client.subscribe(MatchRule(sender: Service.capture, interface: Service.passThru))
            let path = try #require(try await client.call(Service.capture, Capture.performAudioPassThru,
                                                          [Self.request(maxMs: 20000)]).first?.objectPathValue)
            // The plugin really serves the file: 0.3 s of it, byte for byte.
            let (before, early) = try await Self.collect(signals, path, until: 9600)
            #expect(early == nil)

            microphone.unplug()
            let (after, finished) = try await Self.collect(signals, path)
            let body = try #require(finished)
            #expect(body.first == .string("GENERIC_ERROR"))
            #expect(body.count > 1 && body[1] == .boolean(false))
            let info = body.count > 2 ? body[2].stringKeyedValue ?? [:] : [:]
            #expect(info[PassThru.FinishedKeys.reason.name] == .string("device-error"), "\(info)")
            let audio = before + after
            #expect(audio == Array(stack.microphone.prefix(audio.count)))
            #expect(info[PassThru.FinishedKeys.framesCaptured.name] == .uint64(UInt64(audio.count / 2)))
            #expect(try await client.property(Service.capture, PassThru.resultCode, path: path, interface: Service.passThru)
                    == .string("GENERIC_ERROR"))
            #expect(try await client.property(Service.capture, Capture.active) == .objectPath(.root))
            #expect(capture.logText.contains("is gone"), "\(capture.logText.suffix(1500))")
            #expect(capture.isRunning)

            // Still unplugged: refused at once, naming the device.
            let refused = await expectDBusError(EarshotErrorName.genericError.name) {
                _ = try await client.call(Service.capture, Capture.performAudioPassThru, [Self.request(maxMs: 500)])
            }
            #expect(refused?.message.contains(microphone.name) == true, "\(String(describing: refused))")

            // The session names a working input: the next pass-thru records from it.
            _ = try await client.call(Service.session, Session.setDesiredState, [.vardict([
                Session.Keys.category.name: .string("record"), Session.Keys.preferredInput.name: .string("mic"),
            ])])
            let next = try #require(try await client.call(Service.capture, Capture.performAudioPassThru,
                                                          [Self.request(maxMs: 500)]).first?.objectPathValue)
            let (recorded, done) = try await Self.collect(signals, next)
            #expect(done?.first == .string("SUCCESS"))
            #expect(recorded == Array(stack.microphone.prefix(16000)))
            #expect(capture.isRunning)
        }
    }
}
