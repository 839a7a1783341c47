import CaptureCore
import ContractCore
import Testing

@Suite struct EchoDelayMemoryTests {
    static func request(bargeIn: Bool = false, echoCancel: Bool = false) -> PassThruRequest {
        var request = PassThruRequest(samplingRate: 16000, bitsPerSample: 16, maxDurationMs: 5000)
        request.initialPrompt = [SpeechChunk(kind: .text, text: "Say a command")]
        request.bargeIn = bargeIn
        request.echoCancel = echoCancel
        return request
    }

    /// Only the echo reference's delay is the hardware's; the prompt's depends on what the
    /// alert service's output held when it began.
    @Test func onlyTheEchoReferencesDelayIsKept() {
        #expect(!EchoDelayMemory.remembers(Self.request()))
        #expect(!EchoDelayMemory.remembers(Self.request(bargeIn: true)))
        // The echo reference hears the prompt too: it is the one far end.
        #expect(EchoDelayMemory.remembers(Self.request(bargeIn: true, echoCancel: true)))
        #expect(EchoDelayMemory.remembers(Self.request(echoCancel: true)))
    }

    @Test func aDelayIsKeptPerInputAndTakenAtAnyRate() {
        var memory = EchoDelayMemory()
        #expect(memory.delay(to: "default", rate: 16000) == nil)
        memory.remember(2880, at: 16000, to: "default")  // 180 ms
        #expect(memory.delay(to: "default", rate: 16000) == 2880)
        #expect(memory.delay(to: "default", rate: 48000) == 8640)
        #expect(memory.delay(to: "default", rate: 8000) == 1440)
        // Another input has its own.
        #expect(memory.delay(to: "hw:1", rate: 16000) == nil)
        // The newest measurement replaces the last.
        memory.remember(3360, at: 48000, to: "default")  // 70 ms
        #expect(memory.delay(to: "default", rate: 16000) == 1120)
    }
}
