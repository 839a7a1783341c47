import ContractCore
/// `org.earshot.Session1`: the system's audio session and focus policy, after
/// AVAudioSession as the expo-audiocake reference configures it.
public enum SessionContract {
    public static let busName = "org.earshot.Session1"
    public static let managerPath = "/org/earshot/Session1"

    /// The session: its desired and current state, inputs, and clients' claims on audio.
    public enum Manager {
        static let applying = [EarshotContract.invalidArgs] + EarshotContract.errors(
            .invalidCategory, .invalidMode, .invalidOption, .invalidOrientation, .invalidPolarPattern, .invalidInputType,
            .noInputDevice, .dataSourceNotFound, .polarPatternNotSupported, .incompatibleOption)

        static func error(_ name: EarshotErrorName) -> String { name.name }

        /// The keys of `SetDesiredState` and `Activate` requests.
        public enum Keys {
            public static let category = OptionKey(
                .category, "s", doc: "The session's category (any case).", required: true,
                rules: [.oneOf(["ambient", "soloAmbient", "playback", "record", "playAndRecord", "multiRoute"],
                               aliases: ["solo-ambient": "soloAmbient", "recording": "record", "play-and-record": "playAndRecord",
                                         "play_record": "playAndRecord", "multi-route": "multiRoute"], anyCase: true)],
                error: error(.invalidCategory))
            public static let options = OptionKey(
                .options, "as", doc: "Category options (any case); each must suit the category.",
                rules: [.oneOf(["mixWithOthers", "duckOthers", "allowBluetooth", "allowBluetoothA2DP", "defaultToSpeaker",
                                "interruptSpokenAudioAndMixWithOthers", "allowAirPlay"],
                               aliases: ["mix": "mixWithOthers", "mix-with-others": "mixWithOthers", "duck": "duckOthers",
                                         "duck-others": "duckOthers", "bt": "allowBluetooth", "allow-bluetooth": "allowBluetooth",
                                         "a2dp": "allowBluetoothA2DP", "allow-bluetooth-a2dp": "allowBluetoothA2DP",
                                         "speaker": "defaultToSpeaker", "default-to-speaker": "defaultToSpeaker",
                                         "interruptspokes": "interruptSpokenAudioAndMixWithOthers",
                                         "interrupt-spoken-audio-and-mix-with-others": "interruptSpokenAudioAndMixWithOthers",
                                         "airplay": "allowAirPlay", "allow-airplay": "allowAirPlay"], anyCase: true)],
                errors: [error(.invalidOption), error(.incompatibleOption)])
            public static let mode = OptionKey(
                .mode, "s", doc: "The session's mode (any case); it must suit the category.", default: "default",
                rules: [.oneOf(["default", "voiceChat", "videoRecording", "measurement", "moviePlayback", "spokenAudio", "gameChat"],
                               aliases: ["voice-chat": "voiceChat", "video-recording": "videoRecording",
                                         "movie-playback": "moviePlayback", "spoken-audio": "spokenAudio", "game-chat": "gameChat"],
                               anyCase: true)],
                errors: [error(.invalidMode), error(.incompatibleOption)])
            public static let active = OptionKey(
                "Active", "b", doc: "Activate or deactivate the session, last, after everything else applied; absent leaves it as it is.")
            public static let sampleRate = OptionKey(.sampleRate, "d", doc: "A hint in Hz; the device's nearest rate becomes current.",
                                                     rules: [.described("a positive number of Hz")], error: error(.invalidData))
            public static let ioBufferDuration = OptionKey(
                .ioBufferDuration, "d", doc: "A hint in seconds; the device's nearest duration becomes current.",
                rules: [.described("a positive number of seconds")], error: error(.invalidData))
            public static let inputOrientation = OptionKey(
                .inputOrientation, "s", doc: "The input's orientation, as in the reference (any case).",
                rules: [.oneOf(["none", "portrait", "portraitUpsideDown", "landscapeLeft", "landscapeRight",
                                "front", "back", "top", "bottom", "left", "right", "faceUp", "faceDown"],
                               aliases: ["portrait-upside-down": "portraitUpsideDown", "landscape-left": "landscapeLeft",
                                         "landscape-right": "landscapeRight", "face-up": "faceUp", "face-down": "faceDown"],
                               anyCase: true)],
                error: error(.invalidOrientation))
            public static let preferredInput = OptionKey(
                .preferredInput, "s", doc: "An ALSA PCM from ListInputs, or builtInMic for the first capture-capable card.",
                errors: [error(.invalidInputType), error(.noInputDevice)])
            public static let dataSourceName = OptionKey(.dataSourceName, "s", doc: "One of the input's DataSources.",
                                                         error: error(.dataSourceNotFound))
            public static let polarPattern = OptionKey(
                .polarPattern, "s", doc: "A polar pattern the input offers (any case).",
                rules: [.oneOf(["stereo", "cardioid", "omnidirectional", "subcardioid"], anyCase: true)],
                errors: [error(.invalidPolarPattern), error(.polarPatternNotSupported)])
            public static let audioStream = OptionKey(
                "AudioStream", "s",
                doc: "A PipeWire node name that is the activation's own audio (never ducked or muted for it); streams whose "
                    + "`earshot.stream` property has this value are its own too, whatever program plays them: set "
                    + "`PIPEWIRE_PROPS='{ earshot.stream = VALUE }'` or `PULSE_PROP='earshot.stream=VALUE'` in the environment "
                    + "of the programs that play (their children inherit it).",
                rules: [.described("1..256 bytes")], error: EarshotContract.invalidArgs)
        }

        public static let desiredKeys = [
            Keys.category, Keys.options, Keys.mode, Keys.active, Keys.sampleRate, Keys.ioBufferDuration, Keys.inputOrientation,
            Keys.preferredInput, Keys.dataSourceName, Keys.polarPattern,
        ]

        public static let activationKeys = [Keys.category, Keys.options, Keys.mode, Keys.audioStream]

        public static let setDesiredState = MethodDeclaration(
            "SetDesiredState", doc: "Applies a state in order, stopping at the first failure, and keeps it for re-application.",
            in: [ArgumentDeclaration("desired", "a{sv}", doc: "Category and the rest of the state", keys: desiredKeys)], errors: applying)
        public static let getState = MethodDeclaration(
            "GetState", doc: "The state now in effect.",
            out: [ArgumentDeclaration("state", "a{sv}", doc: "the current state: the properties of the same names",
                                      keys: (stateProperties + [keepEnforced]).map { OptionKey($0.name, $0.signature, doc: $0.doc) })])
        public static let listInputs = MethodDeclaration(
            "ListInputs", doc: "The capture devices, with their channels, rates, data sources and polar patterns.",
            out: [ArgumentDeclaration("inputs", "aa{sv}", doc: "one per device", keys: InputKeys.all)])
        public static let activate = MethodDeclaration(
            "Activate", doc: "The caller's claim on audio; interrupts or ducks others as its category says.",
            in: [ArgumentDeclaration("request", "a{sv}", doc: "Category, Options, Mode, AudioStream", keys: activationKeys)],
            out: [ArgumentDeclaration("activation", "o", doc: "the activation object")],
            errors: [EarshotContract.invalidArgs] + EarshotContract.errors(.invalidCategory, .invalidMode, .invalidOption,
                                                                             .incompatibleOption, .rejected)
                + [EarshotContract.limitsExceeded])

        public static let routeChanged = SignalDeclaration(
            "RouteChanged", doc: "The route changed, with AVAudioSession's reason.",
            [ArgumentDeclaration("reason", "s", doc: "e.g. NewDeviceAvailable, CategoryChange"),
             ArgumentDeclaration("previousRoute", "a{sv}", doc: "the Route before", keys: RouteKeys.all)])
        public static let interruption = SignalDeclaration(
            "Interruption", doc: "An activation was interrupted or may resume (unicast to its owner).",
            [ArgumentDeclaration("type", "s", doc: "began or ended"),
             ArgumentDeclaration("options", "a{sv}", doc: "which activation, and by whom or whether to resume", keys: InterruptionKeys.all)])
        public static let mediaServicesReset = SignalDeclaration(
            "MediaServicesReset", doc: "The capture service or the system mixer came back.")
        public static let reapplied = SignalDeclaration(
            "Reapplied", doc: "The kept state was applied again.",
            [ArgumentDeclaration("reason", "s", doc: "what prompted it"), ArgumentDeclaration("ok", "b", doc: "whether it applied"),
             ArgumentDeclaration("error", "s", doc: "the failure, empty when none")])

        public static let keepEnforced = PropertyDeclaration(
            "KeepEnforced", "b", doc: "Re-apply the desired state after route changes, interruptions and resets.", access: .readwrite)
        public static let desiredState = PropertyDeclaration("DesiredState", "a{sv}", doc: "The state last asked for.")
        public static let mixer = PropertyDeclaration("Mixer", "s", doc: "The system mixer attached: pipewire or none.")
        public static let duckLevel = PropertyDeclaration(
            "DuckLevel", "d", doc: "The volume ducked streams play at (0..1, default 0.3).", access: .readwrite,
            errors: EarshotContract.errors(.invalidData))
        /// The keys of each `Streams` entry.
        public enum StreamKeys {
            public static let id = OptionKey("Id", "u", doc: "The PipeWire node's id.")
            public static let application = OptionKey("Application", "s", doc: "The application's name, as it gives it.")
            public static let role = OptionKey("Role", "s", doc: "Its media role (Music, Navigation, …), empty when none.")
            public static let volume = OptionKey("Volume", "d", doc: "Its own level (0..1), before any ducking.")
            public static let ducked = OptionKey("Ducked", "b", doc: "Whether the policy ducks it now.")
            public static let muted = OptionKey("Muted", "b", doc: "Whether the policy mutes it now.")
            public static let all = [id, application, role, volume, ducked, muted]
        }

        /// The keys of `Interruption`'s options.
        public enum InterruptionKeys {
            public static let activation = OptionKey("Activation", "o", doc: "The activation interrupted or resumable.")
            public static let by = OptionKey("By", "o", doc: "When it began: the activation that interrupted it.")
            public static let shouldResume = OptionKey("ShouldResume", "b", doc: "When it ended: whether it may resume now.")
            public static let all = [activation, by, shouldResume]
        }

        /// The keys of `Route`.
        public enum RouteKeys {
            public static let input = OptionKey("Input", "s", doc: "The ALSA PCM captured from.")
            public static let output = OptionKey("Output", "s", doc: "The ALSA PCM played to.")
            public static let mixerSink = OptionKey("MixerSink", "s", doc: "The system mixer's default sink, empty when none.")
            public static let mixerSource = OptionKey("MixerSource", "s", doc: "The system mixer's default source, empty when none.")
            public static let all = [input, output, mixerSink, mixerSource]
        }

        /// The keys of each `ListInputs` entry.
        public enum InputKeys {
            public static let name = OptionKey("Name", "s", doc: "The input's ALSA name, as PreferredInput takes it.")
            public static let description = OptionKey(.description, "s", doc: "What ALSA says it is.")
            public static let channels = OptionKey("Channels", "au", doc: "The channel counts it offers.")
            public static let sampleRates = OptionKey("SampleRates", "au", doc: "The rates it offers, in Hz.")
            public static let dataSources = OptionKey("DataSources", "as", doc: "Its data sources, as DataSourceName takes them.")
            public static let polarPatterns = OptionKey("PolarPatterns", "as", doc: "Its polar patterns, as PolarPattern takes them.")
            public static let all = [name, description, channels, sampleRates, dataSources, polarPatterns]
        }

        public static let streams = PropertyDeclaration(
            "Streams", "aa{sv}", doc: "The mixer's playback streams, with their own levels and what the policy does to them.",
            keys: StreamKeys.all)

        public static let category = PropertyDeclaration(EarshotField.category.name, "s", doc: "The category in effect.")
        public static let mode = PropertyDeclaration(EarshotField.mode.name, "s", doc: "The mode in effect.")
        public static let options = PropertyDeclaration(EarshotField.options.name, "as", doc: "The category options in effect.")
        public static let active = PropertyDeclaration("Active", "b", doc: "Whether the session is active.")
        public static let sampleRate = PropertyDeclaration(EarshotField.sampleRate.name, "d", doc: "The device's actual rate in Hz.")
        public static let ioBufferDuration = PropertyDeclaration(EarshotField.ioBufferDuration.name, "d", doc: "The device's actual buffer duration in seconds.")
        public static let preferredInput = PropertyDeclaration(EarshotField.preferredInput.name, "s", doc: "The input asked for.")
        public static let dataSourceName = PropertyDeclaration(EarshotField.dataSourceName.name, "s", doc: "The data source in use.")
        public static let polarPattern = PropertyDeclaration(EarshotField.polarPattern.name, "s", doc: "The polar pattern in use.")
        public static let inputOrientation = PropertyDeclaration(EarshotField.inputOrientation.name, "s", doc: "The input orientation in use.")
        public static let channels = PropertyDeclaration("Channels", "u", doc: "Input channels (stereo → 2).")
        public static let route = PropertyDeclaration("Route", "a{sv}", doc: "Input and Output in use.", keys: RouteKeys.all)

        /// The properties that mirror `GetState`'s fields, by the same names.
        public static let stateProperties = [category, mode, options, active, sampleRate, ioBufferDuration, preferredInput,
                                             dataSourceName, polarPattern, inputOrientation, channels, route]

        public static let interface = InterfaceDeclaration(
            busName, doc: "The session's desired and current state, its inputs, and clients' claims on audio.",
            methods: [setDesiredState, getState, listInputs, activate],
            signals: [routeChanged, interruption, mediaServicesReset, reapplied],
            properties: [keepEnforced, desiredState, mixer, duckLevel, streams] + stateProperties)
    }

    /// One client's claim on audio, at `/org/earshot/Session1/Activation/N`.
    public enum Activation {
        public static let deactivate = MethodDeclaration(
            "Deactivate", doc: "The owner gives up the claim; those it interrupted may resume.",
            errors: EarshotContract.errors(.disallowed, .rejected))

        public static let owner = PropertyDeclaration("Owner", "s", doc: "The unique name that claimed.", emitsChangedSignal: .const)
        public static let category = PropertyDeclaration(EarshotField.category.name, "s", doc: "The claim's category.", emitsChangedSignal: .const)
        public static let mode = PropertyDeclaration(EarshotField.mode.name, "s", doc: "The claim's mode.", emitsChangedSignal: .const)
        public static let options = PropertyDeclaration(EarshotField.options.name, "as", doc: "The claim's options.", emitsChangedSignal: .const)
        /// A claim's states (`State`): deactivated once it has ended.
        public static let states = ["active", "interrupted", "deactivated"]
        public static let state = PropertyDeclaration("State", "s", doc: EarshotContract.either(states) + " (once it has ended).")
        public static let ducked = PropertyDeclaration("Ducked", "b", doc: "Whether another claim ducks it.")

        public static let interface = InterfaceDeclaration(
            "org.earshot.Session1.Activation", doc: "One client's claim on audio.",
            methods: [deactivate], properties: [owner, category, mode, options, state, ducked])
    }

    public static let service = ServiceDeclaration(
        executable: "earshot-session", busName: busName,
        doc: "The audio session and focus policy: desired state, ordered apply, keep-enforced re-apply, and ducking, muting and interruptions on the system mixer.",
        managerPath: managerPath, interfaces: [Manager.interface, Activation.interface],
        paths: [Activation.interface.name: managerPath + "/Activation/N"],
        notes: [
            Manager.interface.name: [
                "`SetDesiredState` applies in this order, stopping at the first failure (which is returned, and nothing "
                    + "after it applied): category, mode and options; sample rate; IO buffer duration; preferred input; "
                    + "data source and polar pattern; orientation; activation. Sample rate and buffer duration are hints: "
                    + "the device's nearest supported values become current. The desired state is kept, in memory and on "
                    + "disk (`--state-file`).",
                "`GetState` holds `Category`, `Mode`, `Options`, `Active`, `SampleRate`, `IOBufferDuration`, "
                    + "`PreferredInput`, `DataSourceName`, `PolarPattern`, `InputOrientation`, `Channels`, `Route` (`Input`, "
                    + "`Output`) and `KeepEnforced`; each but the last is also a property.",
                "`ListInputs` gives each device's `Name`, `Description`, `Channels` (au), `SampleRates` (au), "
                    + "`DataSources` (as) and `PolarPatterns` (as). Every capture PCM of the ALSA configuration is "
                    + "probed, except PCMs of PipeWire's ALSA plugin (`pipewire`, and `default` with pipewire-alsa) while "
                    + "no PipeWire daemon answers at their server: they could not open.",
                "With `KeepEnforced`, the desired state is applied again after a route change, an interruption and a "
                    + "media-services reset (the capture service or the system mixer leaving and returning); each attempt "
                    + "emits `Reapplied`, and a failure is logged, never fatal.",
                "`RouteChanged` reasons are AVAudioSession's: `NewDeviceAvailable`, `OldDeviceUnavailable`, "
                    + "`CategoryChange`, `Override`, `WakeFromSleep`, `NoSuitableRouteForCategory`, `RouteConfigurationChange`.",
                "With a system mixer attached (`--mixer auto|pipewire|none`, `Mixer`), ducking and muting act on its "
                    + "playback streams (`Streams`), at `DuckLevel`; policy can be tuned with `--policy FILE`.",
            ],
            Activation.interface.name: [
                "A non-mixable activation interrupts the other active non-mixable ones (their owners get `Interruption` "
                    + "`began`, and `ended` with `ShouldResume` when it goes); `duckOthers` ducks them instead.",
                "The owner leaving the bus deactivates it.",
            ],
        ])
}
