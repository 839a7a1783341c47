import ContractCore
import EarshotALSA
import EarshotContract
import Logging
import SessionCore

/// The session's steps made real on ALSA. Made for one apply on the ALSA worker, from the
/// inputs of the last scan and the values in force.
///
/// Sample rate and IO buffer duration are hints: they are negotiated with the input in use
/// (nearest supported rate and period, read back), again whenever the input changes. The
/// category, mode, orientation and activation have no ALSA counterpart; they are checked
/// (a recording category cannot be activated without an input) and recorded.
final class ALSAAudioSystem: AudioSystem {
    private let inputs: [InputDescription]
    private let logger: Logger
    private var input: InputDescription?
    private var rateHint: Double
    private var periodHint: Double
    private var channels: UInt32
    private var negotiated: NegotiatedInput?

    init(inputs: [InputDescription], previous: AppliedState, rateHint: Double, periodHint: Double, logger: Logger) {
        self.inputs = inputs
        self.logger = logger
        input = inputs.first { $0.name == previous.input }
        self.rateHint = rateHint
        self.periodHint = periodHint
        channels = max(1, previous.channels)
    }

    /// The input `name` names: a PCM from the scan, or `builtInMic` for the first
    /// capture-capable hardware device.
    static func resolve(_ name: String, in inputs: [InputDescription]) throws(RuleViolation) -> InputDescription {
        if name.lowercased() == "builtinmic" {
            guard let builtIn = inputs.first(where: \.hardware) else {
                throw RuleViolation(.noInputDevice, field: .preferredInput, "builtInMic: there is no capture-capable hardware device")
            }
            return builtIn
        }
        guard let input = inputs.first(where: { $0.name == name }) else {
            let offered = inputs.isEmpty ? "there are none" : "\(SessionContract.Manager.listInputs.name) offers " + inputs.map(\.name).joined(separator: ", ")
            throw RuleViolation(.invalidInputType, field: .preferredInput, "'\(name)' is not a capture input (\(offered))")
        }
        return input
    }

    /// The input used when none is preferred: ALSA's `default`, when it can capture.
    private var defaultInput: InputDescription? { inputs.first { $0.name == "default" } }

    private func negotiate() {
        guard let input else {
            negotiated = nil
            return
        }
        let rate = UInt32(rateHint.rounded())
        do {
            negotiated = try CaptureDevice.negotiate(input.name, sampleRate: rate, periodSeconds: periodHint, channels: channels)
        } catch {
            negotiated = nil
            logger.warning("cannot negotiate with \(input.name) (\(error)); keeping the hints \(rate) Hz, \(periodHint) s")
        }
    }

    private var rateInForce: Double { negotiated.map { Double($0.sampleRate) } ?? rateHint }
    private var periodInForce: Double { negotiated?.periodSeconds ?? periodHint }

    func setCategory(_ configuration: CategoryConfiguration) throws(RuleViolation) {}

    func setPreferredSampleRate(_ hertz: Double) throws(RuleViolation) -> Double {
        rateHint = hertz
        negotiate()
        return rateInForce
    }

    func setPreferredIOBufferDuration(_ seconds: Double) throws(RuleViolation) -> Double {
        periodHint = seconds
        negotiate()
        return periodInForce
    }

    func setPreferredInput(_ name: String?) throws(RuleViolation) -> (input: String, sampleRate: Double, ioBufferDuration: Double) {
        if let name {
            input = try Self.resolve(name, in: inputs)
        } else {
            input = defaultInput
        }
        negotiate()
        return (input?.name ?? "", rateInForce, periodInForce)
    }

    func setDataSource(_ name: String?, polarPattern: PolarPattern?) throws(RuleViolation)
        -> (dataSource: String, polarPattern: PolarPattern, channels: UInt32) {
        guard let input else {
            if let name {
                throw RuleViolation(.dataSourceNotFound, field: .dataSourceName, "'\(name)': there is no input")
            }
            if polarPattern == .stereo {
                throw RuleViolation(.polarPatternNotSupported, field: .polarPattern, "stereo: there is no input")
            }
            return ("", polarPattern ?? .omnidirectional, 0)
        }
        let source = name ?? input.dataSources[0]
        guard input.dataSources.contains(source) else {
            throw RuleViolation(.dataSourceNotFound, field: .dataSourceName,
                                "'\(source)' is not a data source of \(input.name) (it has \(input.dataSources.joined(separator: ", ")))")
        }
        let pattern = polarPattern ?? (input.channels.first ?? 1 >= 2 ? .stereo : .omnidirectional)
        guard pattern.channels <= input.maxChannels else {
            throw RuleViolation(.polarPatternNotSupported, field: .polarPattern,
                                "\(pattern.rawValue) needs a 2-channel input; \(input.name) captures at most \(input.maxChannels)")
        }
        channels = pattern.channels
        negotiate()
        return (source, pattern, negotiated?.channels ?? channels)
    }

    func setInputOrientation(_ orientation: InputOrientation) throws(RuleViolation) {}

    func setActive(_ active: Bool, configuration: CategoryConfiguration) throws(RuleViolation) {
        if active, configuration.category.records, input == nil {
            throw RuleViolation(.noInputDevice, field: SessionContract.Manager.Keys.active.name,
                                "category \(configuration.category.rawValue) records and there is no input")
        }
    }
}
