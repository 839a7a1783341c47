import EarshotDBus
import SessionCore

/// The session's values as the contract shows them on the bus.
enum SessionValues {
    static func options(_ options: Set<SessionOption>) -> DBusValue { .strings(options.sorted().map(\.rawValue)) }

    /// `Input` and `Output` (ALSA PCMs), and the system mixer's default `MixerSink` and
    /// `MixerSource` (node names, "" when there is none or no mixer).
    static func route(_ applied: AppliedState, mixer: MixerView) -> DBusValue {
        .vardict(["Input": .string(applied.input), "Output": .string(applied.output),
                  "MixerSink": .string(mixer.defaultSink ?? ""), "MixerSource": .string(mixer.defaultSource ?? "")])
    }

    /// `Streams`: every playback stream the mixer shows, with its own level and what the
    /// policy does to it.
    static func streams(_ streams: [MixerStream], treatments: [UInt32: StreamTreatment], ledger: MixerLedger) -> DBusValue {
        .vardicts(streams.map { stream in
            let treatment = treatments[stream.id] ?? .untouched
            return [
                "Id": .uint32(stream.id),
                "Application": .string(stream.application),
                "Role": .string(stream.role),
                "Volume": .double(ledger.ownLevel(of: stream).volume),
                "Ducked": .boolean(treatment == .ducked),
                "Muted": .boolean(treatment == .muted),
            ]
        })
    }

    /// `DesiredState`: the keys that were asked for, in canonical spelling.
    static func desired(_ desired: DesiredState) -> DBusValue {
        var entries: [String: DBusValue] = [
            "Category": .string(desired.configuration.category.rawValue),
            "Mode": .string(desired.configuration.mode.rawValue),
            "Options": options(desired.configuration.options),
        ]
        if let active = desired.active { entries["Active"] = .boolean(active) }
        if let rate = desired.sampleRate { entries["SampleRate"] = .double(rate) }
        if let duration = desired.ioBufferDuration { entries["IOBufferDuration"] = .double(duration) }
        if let orientation = desired.inputOrientation { entries["InputOrientation"] = .string(orientation.rawValue) }
        if let input = desired.preferredInput { entries["PreferredInput"] = .string(input) }
        if let source = desired.dataSourceName { entries["DataSourceName"] = .string(source) }
        if let pattern = desired.polarPattern { entries["PolarPattern"] = .string(pattern.rawValue) }
        return .vardict(entries)
    }

    /// The values in force, each a property of the manager and a key of `GetState`.
    static func state(desired: DesiredState, applied: AppliedState, active: Bool, keepEnforced: Bool) -> [String: DBusValue] {
        [
            "Category": .string(applied.configuration.category.rawValue),
            "Mode": .string(applied.configuration.mode.rawValue),
            "Options": options(applied.configuration.effectiveOptions),
            "Active": .boolean(active),
            "SampleRate": .double(applied.sampleRate),
            "IOBufferDuration": .double(applied.ioBufferDuration),
            "PreferredInput": .string(desired.preferredInput ?? ""),
            "DataSourceName": .string(applied.dataSourceName),
            "PolarPattern": .string(applied.polarPattern.rawValue),
            "InputOrientation": .string(applied.orientation.rawValue),
            "Channels": .uint32(applied.channels),
            "Route": route(applied, mixer: MixerView()),
            "KeepEnforced": .boolean(keepEnforced),
        ]
    }

    static func input(_ input: InputDescription) -> DBusValue {
        .vardict([
            "Name": .string(input.name),
            "Description": .string(input.description),
            "Channels": .array(.uint32, input.channels.map { .uint32($0) }),
            "SampleRates": .array(.uint32, input.sampleRates.map { .uint32($0) }),
            "DataSources": .strings(input.dataSources),
            "PolarPatterns": .strings(input.polarPatterns.map(\.rawValue)),
        ])
    }
}
