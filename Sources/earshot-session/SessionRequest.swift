import ContractCore
import EarshotDBus
import EarshotService
import SessionCore

/// Reading `SetDesiredState` and `Activate` requests: D-Bus types and unknown keys first
/// (`InvalidArgs` naming the key), then the vocabulary and the compatibility rules (their
/// named errors).
enum SessionRequest {
    static func desiredState(_ call: MethodCall) throws(DBusError) -> DesiredState {
        var options = try call.options(0)
        let category = try options.require("Category", .string)
        let optionNames = try options.get("Options", .strings)
        let mode = try options.get("Mode", .string)
        let active = try options.get("Active", .bool)
        let sampleRate = try options.get("SampleRate", .double(unit: "Hz"))
        let ioBufferDuration = try options.get("IOBufferDuration", .double(unit: "s"))
        let orientation = try options.get("InputOrientation", .string)
        let preferredInput = try options.get("PreferredInput", .string)
        let dataSource = try options.get("DataSourceName", .string)
        let polarPattern = try options.get("PolarPattern", .string)
        try options.finish()
        return try DBusError.readingRequest {
            var desired = DesiredState(configuration: try configuration(category: category, mode: mode, options: optionNames),
                                       active: active, sampleRate: sampleRate, ioBufferDuration: ioBufferDuration,
                                       preferredInput: preferredInput, dataSourceName: dataSource)
            desired.inputOrientation = try orientation.map { text throws(RuleViolation) in try InputOrientation.parse(text) }
            desired.polarPattern = try polarPattern.map { text throws(RuleViolation) in try PolarPattern.parse(text) }
            try desired.validate()
            return desired
        }
    }

    /// An activation's `Category` (required), `Mode`, `Options` and `AudioStream` (a mixer
    /// node name, 1..256 bytes).
    static func activation(_ call: MethodCall) throws(DBusError) -> (configuration: CategoryConfiguration, audioStream: String?) {
        var options = try call.options(0)
        let category = try options.require("Category", .string)
        let optionNames = try options.get("Options", .strings)
        let mode = try options.get("Mode", .string)
        let audioStream = try options.get("AudioStream", .string)
        try options.finish()
        if let audioStream, audioStream.isEmpty || audioStream.utf8.count > 256 {
            throw DBusError.invalidArgs("AudioStream: must be 1..256 bytes, a PipeWire node name")
        }
        let parsed: CategoryConfiguration = try DBusError.readingRequest { () throws(RuleViolation) -> CategoryConfiguration in
            try configuration(category: category, mode: mode, options: optionNames)
        }
        return (parsed, audioStream)
    }

    private static func configuration(category: String, mode: String?, options: [String]?) throws(RuleViolation) -> CategoryConfiguration {
        let parsedCategory = try SessionCategory.parse(category)
        let parsedMode = try mode.map { text throws(RuleViolation) in try SessionMode.parse(text) } ?? .default
        var parsedOptions: Set<SessionOption> = []
        for (index, name) in (options ?? []).enumerated() {
            parsedOptions.insert(try SessionOption.parse(name, field: "Options[\(index)]"))
        }
        return try CategoryConfiguration(category: parsedCategory, mode: parsedMode, options: parsedOptions)
    }
}
