import ContractCore

/// The steps of applying a desired state, in the order they are applied.
public enum ApplyStep: String, Sendable, CaseIterable {
    case category, sampleRate, ioBufferDuration, preferredInput, dataSource, orientation, activation
}

/// An input the audio system offers.
public struct InputDescription: Sendable, Hashable {
    public let name: String
    public let description: String
    /// Channel counts the input can capture, ascending.
    public let channels: [UInt32]
    public let sampleRates: [UInt32]
    /// Named sub-devices; an input without any has one, `default`.
    public let dataSources: [String]
    /// Whether this is a hardware device (a candidate for `builtInMic`).
    public let hardware: Bool

    public init(name: String, description: String, channels: [UInt32], sampleRates: [UInt32],
                dataSources: [String], hardware: Bool) {
        self.name = name
        self.description = description
        self.channels = channels
        self.sampleRates = sampleRates
        self.dataSources = dataSources.isEmpty ? ["default"] : dataSources
        self.hardware = hardware
    }

    public var maxChannels: UInt32 { channels.max() ?? 0 }
    public var polarPatterns: [PolarPattern] { PolarPattern.offered(maxChannels: maxChannels) }
}

/// What the audio system actually did: the values in force after an apply.
public struct AppliedState: Sendable, Hashable {
    public var configuration: CategoryConfiguration
    public var sampleRate: Double
    public var ioBufferDuration: Double
    /// The input in use (a resolved PCM name), "" when there is none.
    public var input: String
    public var output: String
    public var dataSourceName: String
    public var polarPattern: PolarPattern
    public var channels: UInt32
    public var orientation: InputOrientation
    public var active: Bool

    public init(configuration: CategoryConfiguration, sampleRate: Double, ioBufferDuration: Double, input: String,
                output: String, dataSourceName: String, polarPattern: PolarPattern, channels: UInt32,
                orientation: InputOrientation, active: Bool) {
        self.configuration = configuration
        self.sampleRate = sampleRate
        self.ioBufferDuration = ioBufferDuration
        self.input = input
        self.output = output
        self.dataSourceName = dataSourceName
        self.polarPattern = polarPattern
        self.channels = channels
        self.orientation = orientation
        self.active = active
    }
}

/// The audio system a desired state is applied to, one step at a time. Each step returns
/// what it actually set, or throws the named error that stops the apply.
public protocol AudioSystem {
    func setCategory(_ configuration: CategoryConfiguration) throws(RuleViolation)
    /// Returns the rate in force.
    func setPreferredSampleRate(_ hertz: Double) throws(RuleViolation) -> Double
    /// Returns the buffer duration in force.
    func setPreferredIOBufferDuration(_ seconds: Double) throws(RuleViolation) -> Double
    /// Selects the input (nil: the system's default) and returns the resolved input with
    /// the rate and buffer duration in force on it.
    func setPreferredInput(_ name: String?) throws(RuleViolation) -> (input: String, sampleRate: Double, ioBufferDuration: Double)
    /// Selects a data source and polar pattern of the current input; returns what is in
    /// force and the channel count that follows.
    func setDataSource(_ name: String?, polarPattern: PolarPattern?) throws(RuleViolation)
        -> (dataSource: String, polarPattern: PolarPattern, channels: UInt32)
    func setInputOrientation(_ orientation: InputOrientation) throws(RuleViolation)
    func setActive(_ active: Bool, configuration: CategoryConfiguration) throws(RuleViolation)
}
