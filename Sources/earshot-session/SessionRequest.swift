import ContractCore
import EarshotContract
import EarshotDBus
import EarshotService
import SessionCore

/// Reading `SetDesiredState` and `Activate` requests against the contract's keys (types,
/// unknown keys and the vocabulary it lists), then the compatibility rules of the session
/// core (their named errors).
enum SessionRequest {
    typealias Keys = SessionContract.Manager.Keys

    static func desiredState(_ call: MethodCall) throws(DBusError) -> DesiredState {
        let options = try call.request(SessionContract.Manager.setDesiredState)
        return try DBusError.readingRequest {
            var desired = DesiredState(configuration: try configuration(options),
                                       active: try options.get(Keys.active),
                                       sampleRate: try options.get(Keys.sampleRate), ioBufferDuration: try options.get(Keys.ioBufferDuration),
                                       preferredInput: try options.get(Keys.preferredInput), dataSourceName: try options.get(Keys.dataSourceName))
            desired.inputOrientation = try options.get(Keys.inputOrientation, as: String.self).map { text throws(RuleViolation) in
                try InputOrientation.parse(text)
            }
            desired.polarPattern = try options.get(Keys.polarPattern, as: String.self).map { text throws(RuleViolation) in
                try PolarPattern.parse(text)
            }
            try desired.validate()
            return desired
        }
    }

    /// An activation's `Category` (required), `Mode`, `Options` and `AudioStream` (a mixer
    /// node name, 1..256 bytes).
    static func activation(_ call: MethodCall) throws(DBusError) -> (configuration: CategoryConfiguration, audioStream: String?) {
        let options = try call.request(SessionContract.Manager.activate)
        let audioStream: String? = try options.get(Keys.audioStream)
        if let audioStream, audioStream.isEmpty || audioStream.utf8.count > 256 {
            throw options.invalid(Keys.audioStream, "must be 1..256 bytes, a PipeWire node name")
        }
        let parsed = try DBusError.readingRequest { try configuration(options) }
        return (parsed, audioStream)
    }

    /// Category, mode and options: the session core reads each word (aliases, any case) and
    /// checks that they suit each other.
    private static func configuration(_ options: DeclaredRequest) throws -> CategoryConfiguration {
        let category = try SessionCategory.parse(try options.require(Keys.category))
        let mode = try options.get(Keys.mode, as: String.self).map { text throws(RuleViolation) in try SessionMode.parse(text) } ?? .default
        var parsedOptions: Set<SessionOption> = []
        for (index, name) in (try options.get(Keys.options, as: [String].self) ?? []).enumerated() {
            parsedOptions.insert(try SessionOption.parse(name, field: "\(Keys.options.name)[\(index)]"))
        }
        return try CategoryConfiguration(category: category, mode: mode, options: parsedOptions)
    }
}
