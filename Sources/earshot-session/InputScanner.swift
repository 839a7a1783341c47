import EarshotALSA
import SessionCore

/// The capture-capable PCMs of the ALSA configuration in use, each probed.
enum InputScanner {
    /// Channel counts beyond this are not offered (plugins accept thousands).
    static let maxOfferedChannels: UInt32 = 8

    /// Rereads the configuration and probes every capture hint, then frees the
    /// configuration again. An input of `previous` that is busy now (open by a pass-thru)
    /// is still there: it keeps its description. Run on the ALSA worker.
    static func scan(previous: [InputDescription] = []) -> [InputDescription] {
        ALSAConfiguration.reload()
        var inputs: [InputDescription] = []
        for hint in DeviceHints.pcms() where hint.capture {
            guard !inputs.contains(where: { $0.name == hint.name }) else { continue }
            guard let capabilities = try? CaptureDevice.probe(hint.name) else {
                if let known = previous.first(where: { $0.name == hint.name }), CaptureDevice.isBusy(hint.name) {
                    inputs.append(known)
                }
                continue
            }
            guard capabilities.bitsPerSample.contains(16) else { continue }
            let channels = capabilities.channels
            let offered = Array(channels.lowerBound...min(channels.upperBound, max(channels.lowerBound, maxOfferedChannels)))
            inputs.append(InputDescription(name: hint.name, description: hint.description, channels: offered,
                                           sampleRates: capabilities.sampleRates,
                                           dataSources: hint.hardware ? CaptureDevice.subdeviceNames(hint.name) : [],
                                           hardware: hint.hardware))
        }
        // Let go of the configuration and of the plugins the probes loaded (the `pipewire`
        // PCM's brings libpipewire and its SPA plugins): the next scan or open reads again.
        ALSAConfiguration.reload()
        return inputs
    }
}
