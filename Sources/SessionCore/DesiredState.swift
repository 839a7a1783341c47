import ContractCore

/// What a client asked the session to be. Every field but the category is optional: an
/// absent one leaves the audio system's value alone.
public struct DesiredState: Sendable, Hashable, Codable {
    public var configuration: CategoryConfiguration
    public var active: Bool?
    /// Hz; a hint, the device's nearest supported rate becomes current.
    public var sampleRate: Double?
    /// Seconds; a hint, the device's nearest supported period becomes current.
    public var ioBufferDuration: Double?
    public var inputOrientation: InputOrientation?
    /// An ALSA PCM name, or `builtInMic`.
    public var preferredInput: String?
    public var dataSourceName: String?
    public var polarPattern: PolarPattern?

    public static let sampleRates: ClosedRange<Double> = 1000...384_000
    public static let ioBufferDurations: ClosedRange<Double> = 0.001...1.0

    /// The session before anyone configures it: AVAudioSession's default category.
    public static let initial = DesiredState(configuration: try! CategoryConfiguration(category: .soloAmbient))

    public init(configuration: CategoryConfiguration, active: Bool? = nil, sampleRate: Double? = nil,
                ioBufferDuration: Double? = nil, inputOrientation: InputOrientation? = nil,
                preferredInput: String? = nil, dataSourceName: String? = nil, polarPattern: PolarPattern? = nil) {
        self.configuration = configuration
        self.active = active
        self.sampleRate = sampleRate
        self.ioBufferDuration = ioBufferDuration
        self.inputOrientation = inputOrientation
        self.preferredInput = preferredInput
        self.dataSourceName = dataSourceName
        self.polarPattern = polarPattern
    }

    /// Range checks for the numeric hints and the free-form names.
    public func validate() throws(RuleViolation) {
        if let sampleRate, !(sampleRate.isFinite && Self.sampleRates.contains(sampleRate)) {
            throw .invalidArgs(.sampleRate, "\(sampleRate) is outside 1000..384000 Hz")
        }
        if let ioBufferDuration, !(ioBufferDuration.isFinite && Self.ioBufferDurations.contains(ioBufferDuration)) {
            throw .invalidArgs(.ioBufferDuration, "\(ioBufferDuration) is outside 0.001..1 s")
        }
        if let preferredInput, preferredInput.isEmpty || preferredInput.utf8.count > 256 {
            throw RuleViolation(.invalidInputType, field: .preferredInput, "must be 1..256 bytes, the name of an input the service lists, or builtInMic")
        }
        if let dataSourceName, dataSourceName.isEmpty || dataSourceName.utf8.count > 256 {
            throw RuleViolation(.dataSourceNotFound, field: .dataSourceName, "must be 1..256 bytes, a data source of the input")
        }
    }
}
