import CaptureCore
import ContractCore
import EarshotContract
import Testing

@Suite struct PassThruRulesTests {
    @Test func samplingRatesByNumberAndName() throws {
        for hz: UInt32 in [8000, 16000, 22050, 44100, 48000] { #expect(try PassThruRules.samplingRate(hz) == hz) }
        #expect(try PassThruRules.samplingRate(named: "8KHZ") == 8000)
        #expect(try PassThruRules.samplingRate(named: "22khz") == 22050)
        #expect(try PassThruRules.samplingRate(named: "44KHZ") == 44100)
        let error = #expect(throws: RuleViolation.self) { try PassThruRules.samplingRate(11025) }
        #expect(error?.message == "\(CaptureContract.Manager.Keys.samplingRate.name): 11025 Hz is not one of 8000, 16000, 22050, 44100, 48000")
        #expect(throws: RuleViolation.self) { try PassThruRules.samplingRate(named: "96KHZ") }
    }

    @Test func bitsAndAudioType() throws {
        #expect(try PassThruRules.bitsPerSample(8) == 8)
        #expect(try PassThruRules.bitsPerSample(named: "16_BIT") == 16)
        #expect(throws: RuleViolation.self) { try PassThruRules.bitsPerSample(24) }
        #expect(throws: RuleViolation.self) { try PassThruRules.bitsPerSample(named: "32_BIT") }
        #expect(try PassThruRules.audioType("PCM") == "PCM")
        #expect(throws: RuleViolation.self) { try PassThruRules.audioType("MP3") }
    }

    @Test func textRules() throws {
        let first = CaptureContract.Manager.Keys.displayText1.name, second = CaptureContract.Manager.Keys.displayText2.name
        _ = try PassThruRules.displayText("", field: first)
        _ = try PassThruRules.displayText(String(repeating: "é", count: 500), field: first)
        for bad in ["a\tb", "a\nb", "   ", String(repeating: "x", count: 501)] {
            let error = #expect(throws: RuleViolation.self) { try PassThruRules.displayText(bad, field: second) }
            #expect(error?.errorName == EarshotErrorName.invalidData.shortName)
            #expect(error?.field == second)
        }
    }

    @Test func outputPaths() throws {
        #expect(try PassThruRules.outputPath("/tmp/take.wav") == "/tmp/take.wav")
        for bad in ["take.wav", "", "/tmp/", "/tmp/a\u{0}b", "/" + String(repeating: "x", count: 4095)] {
            let error = #expect(throws: RuleViolation.self) { try PassThruRules.outputPath(bad) }
            #expect(error?.errorName == EarshotErrorName.invalidData.shortName)
            #expect(error?.field == EarshotField.outputPath.name)
        }
    }

    @Test func promptChunks() throws {
        let chunks = try PassThruRules.initialPrompt([("TEXT", "Speak now"), ("PRE_RECORDED", "LISTEN_JINGLE"), ("SILENCE", "")])
        #expect(chunks.map(\.kind) == [.text, .preRecorded, .silence])
        let kind = #expect(throws: RuleViolation.self) { try PassThruRules.initialPrompt([("TEXT", "ok"), ("MIDI", "x")]) }
        #expect(kind?.field == "\(CaptureContract.Manager.Keys.initialPrompt.name)[1]")
        #expect(throws: RuleViolation.self) { try PassThruRules.initialPrompt([("PRE_RECORDED", "FANFARE")]) }
        #expect(throws: RuleViolation.self) { try PassThruRules.initialPrompt([("TEXT", " ")]) }
        #expect(throws: RuleViolation.self) { try PassThruRules.initialPrompt([("FILE", "relative.wav")]) }
    }

    /// What `Capabilities` offers: everything at a processing rate on a mono input with the
    /// plugin installed (`EchoCancel` only with an echo reference), `off` alone otherwise.
    @Test func processingOffered() {
        let all = PassThruRequest.NoiseSuppression.allCases
        #expect(PassThruRules.processing(rate: 16000, channels: 1, installed: true) == (all, true, false))
        #expect(PassThruRules.processing(rate: 48000, channels: 1, installed: true) == (all, true, false))
        #expect(PassThruRules.processing(rate: 16000, channels: 1, installed: true, echoReference: true) == (all, true, true))
        for (rate, channels, installed) in [(UInt32(22050), UInt32(1), true), (16000, 2, true), (16000, 0, true), (16000, 1, false)] {
            #expect(PassThruRules.processing(rate: rate, channels: channels, installed: installed, echoReference: true) == ([.off], false, false),
                    "\(rate) Hz, \(channels) channel(s), installed \(installed)")
        }
    }

    /// `EchoCancel` is processing (the same rates and chunks), and needs a reference.
    @Test func echoCancelNeedsAReferenceAndWholeFrames() throws {
        var request = PassThruRequest(samplingRate: 16000, bitsPerSample: 16, maxDurationMs: 1000)
        try PassThruRules.checkEchoReference(request, configured: false)  // not asked
        request.echoCancel = true
        #expect(request.processesSpeech && request.cancelsEcho)
        let missing = #expect(throws: RuleViolation.self) { try PassThruRules.checkEchoReference(request, configured: false) }
        #expect(missing?.field == EarshotField.echoCancel.name)
        try PassThruRules.checkEchoReference(request, configured: true)
        request.chunkMs = 25
        let violation = #expect(throws: RuleViolation.self) { try PassThruRules.checkProcessing(request) }
        #expect(violation?.rule.contains(EarshotField.echoCancel.name) == true)
    }

    /// Speech processing needs whole 10 ms frames: a rate that has them and chunks of them.
    @Test func processingNeedsWholeTenMillisecondFrames() throws {
        var request = PassThruRequest(samplingRate: 16000, bitsPerSample: 16, maxDurationMs: 1000)
        try PassThruRules.checkProcessing(request)
        request.samplingRate = 22050
        try PassThruRules.checkProcessing(request)  // nothing asked: nothing checked
        request.noiseSuppression = try PassThruRules.noiseSuppression("moderate")
        #expect(throws: RuleViolation.self) { try PassThruRules.checkProcessing(request) }
        request.samplingRate = 44100
        try PassThruRules.checkProcessing(request)
        request.chunkMs = 25
        let violation = #expect(throws: RuleViolation.self) { try PassThruRules.checkProcessing(request) }
        #expect(violation?.field == EarshotField.chunkMs.name)
        #expect(throws: RuleViolation.self) { try PassThruRules.noiseSuppression("loud") }
    }

    @Test func resultMapping() {
        let table: [(EndReason, ResultCode, Bool)] = [
            (.timeout, .success, true), (.done, .success, true), (.end, .success, true), (.silence, .success, true),
            (.cancel, .aborted, false), (.retry, .retry, true), (.ownerVanished, .aborted, false), (.deviceError, .genericError, false),
        ]
        for (reason, code, success) in table {
            let outcome = PassThruOutcome(reason: reason, promptFailed: false)
            #expect(outcome.resultCode == code && outcome.success == success, "\(reason)")
            let unspoken = PassThruOutcome(reason: reason, promptFailed: true)
            #expect(unspoken.resultCode == (code == .success ? .warnings : code), "\(reason) after a failed prompt")
            #expect(unspoken.success == success)
        }
        #expect(EndReason.ownerVanished.rawValue == "owner-vanished" && EndReason.deviceError.rawValue == "device-error")
    }
}
