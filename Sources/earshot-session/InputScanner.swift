import EarshotALSA
import EarshotPipeWire
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
        var daemons: [String: Bool] = [:]
        for hint in DeviceHints.pcms() where hint.capture {
            guard !inputs.contains(where: { $0.name == hint.name }), daemonAnswers(for: hint.name, asked: &daemons) else { continue }
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

    /// Whether the PCM `name` can reach its sound server: false for a PCM of PipeWire's
    /// ALSA plugin (the `pipewire` and, with pipewire-alsa, `default` PCMs) while no
    /// PipeWire daemon answers at its `server` (as the plugin finds it), true for every
    /// other PCM. Such a probe would fail anyway, and libpipewire's `pw_init` would leave
    /// its SPA support library and more in the process for good. `asked` keeps the
    /// answers of one scan by server.
    static func daemonAnswers(for name: String, asked: inout [String: Bool]) -> Bool {
        guard let definition = PCMDefinition.of(name), definition.type == "pipewire" else { return true }
        let server = definition.fields["server"] ?? ""
        if let known = asked[server] { return known }
        let answers = PipeWireMixer.daemonAnswers(remote: server.isEmpty ? nil : server)
        asked[server] = answers
        return answers
    }
}
