import ContractCore
import EarshotCabinSound
import EarshotClient
import EarshotContract
import EarshotTestHarness
import Foundation

/// A microphone's samples through the real earshot-capture, as a pass-thru with `BargeIn`
/// and the prompt as its `InitialPrompt` records them: a private bus, a file-backed ALSA
/// microphone playing the samples from their first, and the service's own path (it renders
/// the prompt itself, measures the delay and cancels). No alert service runs, so the
/// prompt is not played (the result is `WARNINGS`): the microphone already holds its echo,
/// as one rendering of it sounded.
enum CaptureServicePath {
    static let executable = "earshot-capture"

    /// Whether the service is built next to this program.
    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: ServiceProcess.productsDirectory.appendingPathComponent(executable).path)
    }

    /// What the pass-thru's owner received, sample for sample with `microphone` (16-bit,
    /// mono, at `rate`), cut or padded to its length.
    static func record(_ microphone: [Float], rate: Int, prompt: String, noise: AudioPassThruRequest.NoiseSuppression = .off) async throws -> [Float] {
        try await ServiceSession.with(executable, arguments: ["--device", "mic", "--pace", "device"],
                                      busName: CaptureContract.busName, prepare: { bus in
            let input = bus.directory.appendingPathComponent("microphone.raw")
            try Data(CabinSound.pcm16(microphone)).write(to: input)
            var devices = ALSATestDevices(configPath: bus.directory.appendingPathComponent("asound.conf"))
            devices.microphone("mic", infile: input)
            try devices.write()
            return devices.environment
        }) { session in
            var request = AudioPassThruRequest(samplingRate: UInt32(rate), bitsPerSample: 16,
                                               maxDurationMs: UInt32((microphone.count * 1000 + rate - 1) / rate))
            request.bargeIn = true
            request.initialPrompt = [.text(prompt)]
            request.noiseSuppression = noise
            let passThru = try await CaptureProxy(connection: session.client).perform(request)
            var bytes: [UInt8] = []
            for await chunk in passThru { bytes += chunk.data }
            let result = try await passThru.result
            guard result.resultCode == .warnings || result.resultCode == .success else {
                throw HarnessError("the pass-thru ended with \(result.resultCode.rawValue)")
            }
            return CabinSound.placed(CabinSound.samples(pcm16: bytes), at: 0, count: microphone.count)
        }
    }
}
