import ContractCore
/// `org.earshot.Capture1`: microphone pass-thru in the manner of SmartDeviceLink's
/// PerformAudioPassThru, captured with ALSA.
public enum CaptureContract {
    public static let busName = "org.earshot.Capture1"
    public static let managerPath = "/org/earshot/Capture1"

    /// The manager: starts and ends pass-thrus, and tells what the input can do.
    public enum Manager {
        /// The keys of `PerformAudioPassThru`'s request.
        public enum Keys {
            public static let samplingRate = OptionKey(
                .samplingRate, "u", doc: "Frames per second; also given by name.", required: true,
                rules: [.oneOf(["8000", "16000", "22050", "44100", "48000"],
                               aliases: ["8KHZ": "8000", "16KHZ": "16000", "22KHZ": "22050", "44KHZ": "44100"], unit: "Hz")],
                error: CommonKeys.invalidData)
            public static let bitsPerSample = OptionKey(
                .bitsPerSample, "u", doc: "8 (unsigned) or 16 (signed little-endian); also given by name.", required: true,
                rules: [.oneOf(["8", "16"], aliases: ["8_BIT": "8", "16_BIT": "16"])], error: CommonKeys.invalidData)
            public static let audioType = OptionKey(.audioType, "s", doc: "The encoding of the chunks.", required: true,
                                                    rules: [.oneOf(["PCM"])], error: CommonKeys.invalidData)
            public static let maxDuration = OptionKey("MaxDuration", "u", doc: "The longest it records, in ms.", required: true,
                                                      rules: [.range(1...1_000_000, unit: "ms")], error: CommonKeys.invalidData)
            public static let muteAudio = OptionKey(
                "MuteAudio", "b", doc: "Interrupt other audio (rather than mix with it) while capturing.", default: "true")
            public static let initialPrompt = OptionKey(
                .initialPrompt, "a(ss)", doc: "Spoken through org.earshot.Alerts1.Speak before recording starts.",
                rules: [CommonKeys.speechRule], error: CommonKeys.invalidData)
            public static let displayText1 = CommonKeys.text("DisplayText1", doc: "The HMI's first line while it records.")
            public static let displayText2 = CommonKeys.text("DisplayText2", doc: "The HMI's second line while it records.")
            public static let chunkMs = OptionKey(.chunkMs, "u", doc: "Audio per AudioPassThru signal.", default: "100",
                                                  rules: [.range(10...1000, unit: "ms")], error: CommonKeys.invalidData)
            public static let endOnSilenceMs = OptionKey(
                "EndOnSilenceMs", "u", doc: "End with SUCCESS after this much silence following speech; 0 is off.",
                default: "0", rules: [.range(0...1_000_000, unit: "ms")], error: CommonKeys.invalidData)
            public static let outliveOwner = CommonKeys.outliveOwner
            public static let outputPath = OptionKey(
                .outputPath, "s", doc: "Also write the audio there as a WAV file, with the caller's permissions.",
                rules: [.described("an absolute path to a file")], error: CommonKeys.invalidData)
            public static let delivery = OptionKey(
                .delivery, "s", doc: "Chunks as AudioPassThru signals, only through OpenStream's pipe, or both.",
                default: "signals", rules: [.oneOf(["signals", "stream", "both"])], error: CommonKeys.invalidData)
            public static let noiseSuppression = OptionKey(
                .noiseSuppression, "s",
                doc: "Suppress steady noise (road, fan) in the audio: off, moderate or high. Not off: 8000, 16000, 44100 or "
                    + "48000 Hz and a ChunkMs that is a multiple of 10.",
                default: "off", rules: [.oneOf(["off", "moderate", "high"])], error: CommonKeys.invalidData)
            public static let bargeIn = OptionKey(
                .bargeIn, "b",
                doc: "With an InitialPrompt: record from the prompt's start, so the user can talk over it, with the prompt's "
                    + "own sound cancelled from the audio (echo cancellation against the prompt as rendered). Same rates "
                    + "and ChunkMs as NoiseSuppression.",
                default: "false")
            public static let echoCancel = OptionKey(
                .echoCancel, "b",
                doc: "Cancel from the audio whatever the speakers play (radio, navigation, prompts and alerts), as the service's "
                    + "echo reference hears it (`earshot-capture --echo-reference`); the reference itself never reaches the "
                    + "caller. Independent of BargeIn; with both, the reference also carries the prompt. Same rates and ChunkMs "
                    + "as NoiseSuppression; UnsupportedResource when the service has no echo reference.",
                default: "false")
        }

        public static let requestKeys = [
            Keys.samplingRate, Keys.bitsPerSample, Keys.audioType, Keys.maxDuration, Keys.muteAudio, Keys.initialPrompt,
            Keys.displayText1, Keys.displayText2, Keys.chunkMs, Keys.endOnSilenceMs, Keys.outliveOwner, Keys.outputPath,
            Keys.delivery, Keys.noiseSuppression, Keys.bargeIn, Keys.echoCancel,
        ]

        public static let performAudioPassThru = MethodDeclaration(
            "PerformAudioPassThru", doc: "Starts capturing for the caller; replies at once with the pass-thru's object.",
            in: [ArgumentDeclaration("request", "a{sv}", doc: "the pass-thru's keys", keys: requestKeys)],
            out: [ArgumentDeclaration("passthru", "o", doc: "the pass-thru object")],
            errors: [EarshotContract.invalidArgs, EarshotContract.accessDenied]
                + EarshotContract.errors(.invalidData, .rejected, .unsupportedResource, .fileNotFound, .genericError))
        public static let endAudioPassThru = MethodDeclaration(
            "EndAudioPassThru", doc: "Ends the caller's active pass-thru with SUCCESS.",
            errors: EarshotContract.errors(.rejected))

        /// The keys of each `Capabilities` entry: a combination the input accepts, by the
        /// request keys' names.
        public enum CapabilityKeys {
            public static let samplingRate = OptionKey(.samplingRate, "u", doc: "Frames per second.")
            public static let bitsPerSample = OptionKey(.bitsPerSample, "u", doc: "8 or 16.")
            public static let audioType = OptionKey(.audioType, "s", doc: "PCM.")
            public static let noiseSuppression = OptionKey(
                .noiseSuppression, "as",
                doc: "The `NoiseSuppression` levels a pass-thru at this rate may ask for: `off`, `moderate` and `high` where speech "
                    + "processing is installed and works (a mono input at 8000, 16000, 44100 or 48000 Hz), else `off` alone.")
            public static let bargeIn = OptionKey(
                .bargeIn, "b", doc: "Whether a pass-thru at this rate may ask for `BargeIn` (as for `NoiseSuppression`).")
            public static let echoCancel = OptionKey(
                .echoCancel, "b",
                doc: "Whether a pass-thru at this rate may ask for `EchoCancel`: as for `BargeIn`, and the service has an echo "
                    + "reference.")
            public static let all = [samplingRate, bitsPerSample, audioType, noiseSuppression, bargeIn, echoCancel]
        }

        public static let capabilities = PropertyDeclaration(
            "Capabilities", "aa{sv}", doc: "What the input in use accepts, one entry per combination.", keys: CapabilityKeys.all)
        public static let device = PropertyDeclaration("Device", "s", doc: "The ALSA PCM in use.")
        public static let active = PropertyDeclaration("Active", "o", doc: "The active pass-thru, / when idle.")
        public static let endsAtMonotonicUs = PropertyDeclaration(
            "EndsAtMonotonicUs", "t", doc: "When the active pass-thru ends by its MaxDuration (CLOCK_MONOTONIC µs); 0 when idle.")

        public static let interface = InterfaceDeclaration(
            busName, doc: "Starts and ends pass-thrus, and tells what the input can do.",
            methods: [performAudioPassThru, endAudioPassThru],
            properties: [capabilities, device, active, endsAtMonotonicUs])
    }

    /// One pass-thru, at `/org/earshot/Capture1/PassThru/N`: its audio, its end, and the
    /// HMI's user actions.
    public enum PassThru {
        /// Why a pass-thru ends (`Finished`'s `Reason`).
        public static let endReasons = ["timeout", "done", "end", "cancel", "retry", "silence", "owner-vanished", "interrupted", "device-error"]
        /// What a pass-thru is doing (`State`).
        public static let states = ["prompting", "recording", "finished"]

        /// The keys of `Finished`'s info.
        public enum FinishedKeys {
            public static let framesCaptured = OptionKey("FramesCaptured", "t", doc: "Frames captured in all.")
            public static let durationMs = OptionKey("DurationMs", "u", doc: "The audio's length in ms.")
            public static let reason = OptionKey("Reason", "s", doc: EarshotContract.either(endReasons) + ".")
            public static let monotonicUs = OptionKey("MonotonicUs", "t", doc: "When it ended (CLOCK_MONOTONIC µs).")
            public static let outputError = OptionKey("OutputError", "s", doc: "Why OutputPath could not be completed, when it could not.")
            static let all = [framesCaptured, durationMs, reason, monotonicUs, outputError]
        }

        public static let end = MethodDeclaration(
            "End", doc: "The owner ends the pass-thru with SUCCESS.", errors: EarshotContract.errors(.disallowed, .rejected))
        public static let done = MethodDeclaration("Done", doc: "The user ends the pass-thru with SUCCESS.",
                                                     errors: EarshotContract.errors(.disallowed, .rejected))
        public static let cancel = MethodDeclaration("Cancel", doc: "The user cancels the pass-thru: ABORTED.",
                                                       errors: EarshotContract.errors(.disallowed, .rejected))
        public static let retry = MethodDeclaration("Retry", doc: "The user asks to record again: RETRY.",
                                                      errors: EarshotContract.errors(.disallowed, .rejected))
        public static let openStream = MethodDeclaration(
            "OpenStream", doc: "A pipe carrying the same PCM as the chunks, from now until the end (owner only).",
            out: [ArgumentDeclaration("fd", "h", doc: "the pipe's read end")],
            errors: EarshotContract.errors(.disallowed, .rejected))

        public static let audioPassThru = SignalDeclaration(
            "AudioPassThru", doc: "A chunk of raw interleaved PCM, ChunkMs long, unicast to the owner.",
            [ArgumentDeclaration("data", "ay", doc: "the PCM, no header"),
             ArgumentDeclaration("sequence", "t", doc: "from 0, without gaps"),
             ArgumentDeclaration("monotonicUs", "t", doc: "when the chunk's last frame was read (CLOCK_MONOTONIC µs)")])
        public static let finished = SignalDeclaration(
            "Finished", doc: "The pass-thru ended, with its result code (broadcast).",
            [ArgumentDeclaration("resultCode", "s", doc: "SmartDeviceLink's result code"),
             ArgumentDeclaration("success", "b", doc: "whether the result counts as success"),
             ArgumentDeclaration("info", "a{sv}", doc: "FramesCaptured t, DurationMs u, Reason s, MonotonicUs t", keys: FinishedKeys.all)])

        public static let state = PropertyDeclaration("State", "s", doc: EarshotContract.either(states) + ".")
        public static let owner = PropertyDeclaration("Owner", "s", doc: "The unique name that started it.", emitsChangedSignal: .const)
        public static let samplingRate = PropertyDeclaration(EarshotField.samplingRate.name, "u", doc: "Frames per second.", emitsChangedSignal: .const)
        public static let bitsPerSample = PropertyDeclaration(EarshotField.bitsPerSample.name, "u", doc: "8 (unsigned) or 16 (signed little-endian).",
                                                              emitsChangedSignal: .const)
        public static let channels = PropertyDeclaration("Channels", "u", doc: "Interleaved channels per frame.", emitsChangedSignal: .const)
        public static let maxDuration = PropertyDeclaration("MaxDuration", "u", doc: "The longest it records, in ms.",
                                                            emitsChangedSignal: .const)
        public static let displayText1 = PropertyDeclaration("DisplayText1", "s", doc: "The HMI's first line while it records.",
                                                             emitsChangedSignal: .const)
        public static let displayText2 = PropertyDeclaration("DisplayText2", "s", doc: "The HMI's second line while it records.",
                                                             emitsChangedSignal: .const)
        public static let framesCaptured = PropertyDeclaration(
            "FramesCaptured", "t", doc: "Frames captured so far; changes with every chunk, so it is not announced.",
            emitsChangedSignal: .false)
        public static let endsAtMonotonicUs = PropertyDeclaration(
            "EndsAtMonotonicUs", "t",
            doc: "When it ends by its MaxDuration (CLOCK_MONOTONIC µs): exact once it records; while its prompt is spoken, "
                + "from the prompt's end (recording starts 50 to 100 ms after it), never early and at most 50 ms late; 0 until known.")
        public static let resultCode = PropertyDeclaration("ResultCode", "s", doc: "Its result code; empty until it finishes.")

        public static let interface = InterfaceDeclaration(
            "org.earshot.Capture1.PassThru", doc: "One pass-thru: its audio, its end, and the HMI's user actions.",
            methods: [end, done, cancel, retry, openStream],
            signals: [audioPassThru, finished],
            properties: [state, owner, samplingRate, bitsPerSample, channels, maxDuration, displayText1, displayText2,
                         framesCaptured, endsAtMonotonicUs, resultCode])
    }

    public static let service = ServiceDeclaration(
        executable: "earshot-capture", busName: busName,
        doc: "Microphone pass-thru on ALSA: PCM chunks as signals to the requester, with SmartDeviceLink's result codes.",
        managerPath: managerPath, interfaces: [Manager.interface, PassThru.interface],
        paths: [PassThru.interface.name: managerPath + "/PassThru/N"],
        notes: [
            Manager.interface.name: [
                "One pass-thru runs at a time: a second request is refused with `Rejected`, naming the active one and its "
                    + "milliseconds left. A request that fails its checks starts nothing.",
                "The input, rate hints, buffer duration and channel count come from the session service's state when it "
                    + "runs (`stereo` gives 2 channels); `Capabilities` and `Device` follow the input in use.",
                "`InitialPrompt` is spoken through `org.earshot.Alerts1.Speak` before recording starts. When it cannot be "
                    + "spoken, the capture still runs and ends with `WARNINGS` instead of `SUCCESS`. Recording starts 50 ms "
                    + "after the prompt's end, or as soon as the session and the device allow if that is later, so the end "
                    + "`EndsAtMonotonicUs` tells while the prompt is spoken is right to within 50 ms.",
            ],
            PassThru.interface.name: [
                "`AudioPassThru` carries raw interleaved PCM with no header: exactly `ChunkMs` of audio per signal except "
                    + "the last, `sequence` from 0 without gaps, `monotonicUs` when the chunk's last frame was read. It is "
                    + "unicast to the owner. With `Delivery` `stream` no chunk is signalled; `OpenStream`'s pipe carries the "
                    + "same bytes from the moment of the call and is closed at the end.",
                "Results: the `MaxDuration` timeout, `Done`, `End` and `EndAudioPassThru` give `SUCCESS`; `Cancel` gives "
                    + "`ABORTED` (success false); `Retry` gives `RETRY` (success true); the owner leaving gives `ABORTED`; "
                    + "another client's non-mixable session activation gives `ABORTED` (`interrupted`); a device failure "
                    + "gives `GENERIC_ERROR`; silence after speech (`EndOnSilenceMs`) gives `SUCCESS`. A prompt that could "
                    + "not be spoken turns `SUCCESS` into `WARNINGS`.",
                "`Finished` info: `FramesCaptured` (t), `DurationMs` (u), `MonotonicUs` (t), `Reason` (s: `timeout`, "
                    + "`done`, `end`, `cancel`, `retry`, `silence`, `owner-vanished`, `interrupted`, `device-error`), and "
                    + "`OutputError` (s) when `OutputPath` could not be completed.",
                "Ends by a user or the owner first read what the device captured since the last chunk, so the short last "
                    + "chunk holds the audio up to the request.",
            ],
        ])
}
