import EarshotContract
import EarshotDBus
import SessionCore

/// The session's values as the contract shows them on the bus.
enum SessionValues {
    private typealias Manager = SessionContract.Manager
    private typealias Keys = SessionContract.Manager.Keys

    static func options(_ options: Set<SessionOption>) -> DBusValue { .strings(options.sorted().map(\.rawValue)) }

    /// `Input` and `Output` (ALSA PCMs), and the system mixer's default `MixerSink` and
    /// `MixerSource` (node names, "" when there is none or no mixer).
    static func route(_ applied: AppliedState, mixer: MixerView) -> DBusValue {
        .vardict([Manager.RouteKeys.input.name: .string(applied.input), Manager.RouteKeys.output.name: .string(applied.output),
                  Manager.RouteKeys.mixerSink.name: .string(mixer.defaultSink ?? ""), Manager.RouteKeys.mixerSource.name: .string(mixer.defaultSource ?? "")])
    }

    /// `Streams`: every playback stream the mixer shows, with its own level and what the
    /// policy does to it.
    static func streams(_ streams: [MixerStream], treatments: [UInt32: StreamTreatment]) -> DBusValue {
        .vardicts(streams.map { stream in
            let treatment = treatments[stream.id] ?? .untouched
            return [
                Manager.StreamKeys.id.name: .uint32(stream.id),
                Manager.StreamKeys.application.name: .string(stream.application),
                Manager.StreamKeys.role.name: .string(stream.role),
                Manager.StreamKeys.volume.name: .double(stream.volume),
                Manager.StreamKeys.ducked.name: .boolean(treatment == .ducked),
                Manager.StreamKeys.muted.name: .boolean(treatment == .muted),
            ]
        })
    }

    /// `DesiredState`: the keys that were asked for, in canonical spelling.
    static func desired(_ desired: DesiredState) -> DBusValue {
        var entries: [String: DBusValue] = [
            Keys.category.name: .string(desired.configuration.category.rawValue),
            Keys.mode.name: .string(desired.configuration.mode.rawValue),
            Keys.options.name: options(desired.configuration.options),
        ]
        if let active = desired.active { entries[Keys.active.name] = .boolean(active) }
        if let rate = desired.sampleRate { entries[Keys.sampleRate.name] = .double(rate) }
        if let duration = desired.ioBufferDuration { entries[Keys.ioBufferDuration.name] = .double(duration) }
        if let orientation = desired.inputOrientation { entries[Keys.inputOrientation.name] = .string(orientation.rawValue) }
        if let input = desired.preferredInput { entries[Keys.preferredInput.name] = .string(input) }
        if let source = desired.dataSourceName { entries[Keys.dataSourceName.name] = .string(source) }
        if let pattern = desired.polarPattern { entries[Keys.polarPattern.name] = .string(pattern.rawValue) }
        return .vardict(entries)
    }

    /// The values in force, each a property of the manager and a key of `GetState`.
    static func state(desired: DesiredState, applied: AppliedState, active: Bool, keepEnforced: Bool) -> [String: DBusValue] {
        [
            Manager.category.name: .string(applied.configuration.category.rawValue),
            Manager.mode.name: .string(applied.configuration.mode.rawValue),
            Manager.options.name: options(applied.configuration.effectiveOptions),
            Manager.active.name: .boolean(active),
            Manager.sampleRate.name: .double(applied.sampleRate),
            Manager.ioBufferDuration.name: .double(applied.ioBufferDuration),
            Manager.preferredInput.name: .string(desired.preferredInput ?? ""),
            Manager.dataSourceName.name: .string(applied.dataSourceName),
            Manager.polarPattern.name: .string(applied.polarPattern.rawValue),
            Manager.inputOrientation.name: .string(applied.orientation.rawValue),
            Manager.channels.name: .uint32(applied.channels),
            Manager.route.name: route(applied, mixer: MixerView()),
            Manager.keepEnforced.name: .boolean(keepEnforced),
        ]
    }

    static func input(_ input: InputDescription) -> DBusValue {
        .vardict([
            Manager.InputKeys.name.name: .string(input.name),
            Manager.InputKeys.description.name: .string(input.description),
            Manager.InputKeys.channels.name: .array(.uint32, input.channels.map { .uint32($0) }),
            Manager.InputKeys.sampleRates.name: .array(.uint32, input.sampleRates.map { .uint32($0) }),
            Manager.InputKeys.dataSources.name: .strings(input.dataSources),
            Manager.InputKeys.polarPatterns.name: .strings(input.polarPatterns.map(\.rawValue)),
        ])
    }
}
