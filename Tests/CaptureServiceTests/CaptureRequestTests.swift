import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import Foundation
import Testing

@Suite(.timeLimit(.minutes(2))) struct CaptureRequestTests {
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    static let invalidData = EarshotErrorName.invalidData.name

    /// Each bad key gets its named error and a message naming the field.
    static let cases: [(String, [String: DBusValue], String, String)] = [
        ("rate not offered", [RequestKeys.samplingRate.name: .uint32(11025)], invalidData, "\(CaptureContract.Manager.Keys.samplingRate.name): 11025 Hz is not one of"),
        ("rate name unknown", [RequestKeys.samplingRate.name: .string("96KHZ")], invalidData, "\(CaptureContract.Manager.Keys.samplingRate.name): '96KHZ'"),
        ("rate of the wrong type", [RequestKeys.samplingRate.name: .double(16000)], invalidArgs, "\(CaptureContract.Manager.Keys.samplingRate.name): got d"),
        ("width not offered", [RequestKeys.bitsPerSample.name: .uint32(24)], invalidData, "\(CaptureContract.Manager.Keys.bitsPerSample.name): 24 is not 8 or 16"),
        ("width name unknown", [RequestKeys.bitsPerSample.name: .string("24_BIT")], invalidData, "\(CaptureContract.Manager.Keys.bitsPerSample.name): '24_BIT'"),
        ("audio type", [RequestKeys.audioType.name: .string("MP3")], invalidData, "\(CaptureContract.Manager.Keys.audioType.name): 'MP3' is not PCM"),
        ("audio type of the wrong type", [RequestKeys.audioType.name: .uint32(1)], invalidArgs, "\(CaptureContract.Manager.Keys.audioType.name): got u, wanted s"),
        ("duration zero", [RequestKeys.maxDuration.name: .uint32(0)], invalidData, "\(CaptureContract.Manager.Keys.maxDuration.name): 0 is outside 1..1000000 ms"),
        ("duration too long", [RequestKeys.maxDuration.name: .uint32(1_000_001)], invalidData, "\(CaptureContract.Manager.Keys.maxDuration.name): 1000001 is outside"),
        ("duration negative", [RequestKeys.maxDuration.name: .int32(-5)], invalidData, "\(CaptureContract.Manager.Keys.maxDuration.name): -5 is outside"),
        ("chunk too short", [RequestKeys.chunkMs.name: .uint32(9)], invalidData, "\(CaptureContract.Manager.Keys.chunkMs.name): 9 is outside 10..1000 ms"),
        ("chunk too long", [RequestKeys.chunkMs.name: .uint32(1001)], invalidData, "\(CaptureContract.Manager.Keys.chunkMs.name): 1001 is outside"),
        ("mute of the wrong type", [RequestKeys.muteAudio.name: .string("yes")], invalidArgs, "\(CaptureContract.Manager.Keys.muteAudio.name): got s, wanted b"),
        ("display text with a tab", [RequestKeys.displayText1.name: .string("a\tb")], invalidData, "\(CaptureContract.PassThru.displayText1.name): must not contain a tab"),
        ("display text of spaces", [RequestKeys.displayText2.name: .string("   ")], invalidData,
         "\(CaptureContract.PassThru.displayText2.name): must not be whitespace only"),
        ("display text too long", [RequestKeys.displayText1.name: .string(String(repeating: "x", count: 501))], invalidData,
         "\(CaptureContract.PassThru.displayText1.name): 501 characters"),
        ("prompt of the wrong type", [RequestKeys.initialPrompt.name: .strings(["hello"])], invalidArgs,
         "\(CaptureContract.Manager.Keys.initialPrompt.name): got as, wanted a(ss)"),
        ("prompt chunk type",
         [RequestKeys.initialPrompt.name: .array(.structure([.string, .string]), [.structure([.string("MIDI"), .string("x")])])],
         invalidData, "\(CaptureContract.Manager.Keys.initialPrompt.name)[0]: type 'MIDI'"),
        ("prompt file missing",
         [RequestKeys.initialPrompt.name: .array(.structure([.string, .string]),
                                                 [.structure([.string("FILE"), .string("/nonexistent.wav")])])],
         EarshotErrorName.fileNotFound.name, "\(CaptureContract.Manager.Keys.initialPrompt.name)[0]: cannot read /nonexistent.wav"),
        ("delivery unknown", [RequestKeys.delivery.name: .string("pipe")], invalidData,
         "Delivery: 'pipe' is not one of signals, stream, both"),
        ("delivery of the wrong type", [RequestKeys.delivery.name: .boolean(true)], invalidArgs, "Delivery: got b, wanted s"),
        ("noise level unknown", [RequestKeys.noiseSuppression.name: .string("loud")], invalidData,
         "\(CaptureContract.Manager.Keys.noiseSuppression.name): 'loud' is not one of off, moderate, high"),
        ("noise level of the wrong type", [RequestKeys.noiseSuppression.name: .uint32(2)], invalidArgs,
         "\(CaptureContract.Manager.Keys.noiseSuppression.name): got u, wanted s"),
        ("noise suppressed at a rate without whole 10 ms frames",
         [RequestKeys.samplingRate.name: .uint32(22050), RequestKeys.noiseSuppression.name: .string("high")], invalidData,
         "\(CaptureContract.Manager.Keys.samplingRate.name): 22050 Hz cannot be processed (\(CaptureContract.Manager.Keys.noiseSuppression.name))"),
        ("noise suppressed in chunks that are not whole frames",
         [RequestKeys.chunkMs.name: .uint32(15), RequestKeys.noiseSuppression.name: .string("moderate")], invalidData,
         "\(CaptureContract.Manager.Keys.chunkMs.name): 15 ms is not a multiple of 10 ms, which \(CaptureContract.Manager.Keys.noiseSuppression.name) needs"),
        ("barge-in of the wrong type", [RequestKeys.bargeIn.name: .string("yes")], invalidArgs, "\(CaptureContract.Manager.Keys.bargeIn.name): got s, wanted b"),
        ("barge-in at a rate without whole 10 ms frames",
         [RequestKeys.samplingRate.name: .uint32(22050), RequestKeys.bargeIn.name: .boolean(true),
          RequestKeys.initialPrompt.name: .array(.structure([.string, .string]), [.structure([.string("TEXT"), .string("Speak now")])])],
         invalidData, "\(CaptureContract.Manager.Keys.samplingRate.name): 22050 Hz cannot be processed (\(CaptureContract.Manager.Keys.bargeIn.name))"),
        ("echo cancellation of the wrong type", [RequestKeys.echoCancel.name: .string("yes")], invalidArgs,
         "\(CaptureContract.Manager.Keys.echoCancel.name): got s, wanted b"),
        ("echo cancellation without an echo reference", [RequestKeys.echoCancel.name: .boolean(true)],
         EarshotErrorName.unsupportedResource.name, "\(CaptureContract.Manager.Keys.echoCancel.name): this service has no echo reference"),
        ("echo cancellation in chunks that are not whole frames",
         [RequestKeys.chunkMs.name: .uint32(25), RequestKeys.echoCancel.name: .boolean(true)], invalidData,
         "\(CaptureContract.Manager.Keys.chunkMs.name): 25 ms is not a multiple of 10 ms, which \(CaptureContract.Manager.Keys.echoCancel.name) needs"),
        ("unknown key", ["Colour": .string("red")], invalidArgs, "Colour: unknown key"),
    ]

    /// Requests the client refuses to send, sent raw.
    @Test func everyKeyIsChecked() async throws {
        try await CaptureFixture.with(input: CaptureFixture.pattern(1000)) { capture in
            for (what, change, name, message) in Self.cases {
                let error = await #expect(throws: DBusError.self, "\(what)") {
                    try await capture.start(raw: CaptureFixture.rawRequest(change))
                }
                #expect(error?.name == name, "\(what): \(String(describing: error))")
                #expect(error?.message.hasPrefix(message) == true, "\(what): \(String(describing: error?.message))")
            }
            for key in [RequestKeys.samplingRate, RequestKeys.bitsPerSample, RequestKeys.audioType, RequestKeys.maxDuration] {
                var request = CaptureFixture.rawRequest()
                request[key.name] = nil
                let error = await #expect(throws: DBusError.self) { try await capture.start(raw: request) }
                #expect(error?.name == Self.invalidArgs)
                #expect(error?.message.hasPrefix("\(key.name): required key is missing") == true)
            }
            // Nothing was started by any of them.
            let active = try await capture.capture.active()
            #expect(active == nil)
        }
    }

    @Test func aDeviceThatCannotDoTheRequestIsUnsupportedResource() async throws {
        // A strictly mono microphone asked for... a width ALSA's file plugin refuses? It
        // accepts every width, so refuse through channels: the service captures mono, and
        // this device only does stereo.
        try await CaptureFixture.with(input: CaptureFixture.pattern(1000), channels: 2) { capture in
            let error = await #expect(throws: EarshotError.self) { _ = try await capture.start(CaptureFixture.request()) }
            #expect(error?.name == EarshotErrorName.unsupportedResource.name, "\(String(describing: error))")
            let capabilities = try await capture.capture.capabilities()
            #expect(!capabilities.isEmpty)
        }
    }
}
