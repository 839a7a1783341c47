import ContractCore
/// `org.earshot.Alerts1`: the HMI's alert presenter and voice, after SDL-0282.
public enum AlertsContract {
    public static let busName = "org.earshot.Alerts1"
    public static let managerPath = "/org/earshot/Alerts1"

    /// The manager: queues alerts and speech, and holds the presenter's settings.
    public enum Manager {
        /// The keys of `PresentAlert`'s alert and of `Speak`'s options.
        public enum Keys {
            public static let text = CommonKeys.text(EarshotField.text.name, doc: "The first text line.")
            public static let secondaryText = CommonKeys.text(EarshotField.secondaryText.name, doc: "The second text line.")
            public static let tertiaryText = CommonKeys.text(EarshotField.tertiaryText.name, doc: "The third text line (not enough on its own).")
            public static let timeout = OptionKey(
                .timeout, "d", doc: "Seconds it stays without buttons; 0 or absent is DefaultTimeout, others are held to 3..10.",
                rules: [.described("a finite number of seconds")], error: CommonKeys.invalidData)
            public static let audio = OptionKey("Audio", "a(ss)", doc: "What is spoken or played, in order.",
                                                rules: [CommonKeys.speechRule], error: CommonKeys.invalidData)
            public static let playTone = OptionKey(
                "PlayTone", "b", doc: "A tone before the audio (ignored, with a warning, without audio).", default: "false")
            public static let showWaitIndicator = OptionKey("ShowWaitIndicator", "b", doc: "Show a wait indicator.", default: "false")
            public static let softButtons = OptionKey(
                .softButtons, "aa{sv}", doc: "At most 4 buttons, each with a unique Id.",
                rules: [.described("at most 4, ids unique, a TEXT button needs Text, an IMAGE button an Image")],
                error: CommonKeys.invalidData, keys: SoftButtonKeys.all)
            public static let icon = OptionKey(.icon, "s", doc: "The icon's path (a missing one is a warning).", default: "\"\"")
            public static let priority = CommonKeys.priority
            public static let outliveOwner = CommonKeys.outliveOwner
            public static let playedAudio = OptionKey(
                "PlayedAudio", "h",
                doc: "A pipe's write end that receives what is played, as it is queued for the output (up to about four "
                    + "seconds and a sentence ahead of the speaker): a WAV header (16-bit mono at the output's rate, lengths "
                    + "unknown), then every frame, the tone's too; closed at the end. Never waited for: a reader more than "
                    + "8 MiB behind loses the rest (EOF). StartedAtMonotonicUs says when its first frame went out; frame n "
                    + "plays n frames later.")
        }

        /// The keys of each of `SoftButtons`' dictionaries.
        public enum SoftButtonKeys {
            public static let id = OptionKey("Id", "q", doc: "The button's id, unique within the alert.", required: true,
                                             error: CommonKeys.invalidData)
            public static let text = OptionKey(.text, "s", doc: "Its label.", default: "\"\"")
            public static let image = OptionKey(.image, "s", doc: "Its image's path (a missing one is a warning).", default: "\"\"")
            public static let type = OptionKey("Type", "s", doc: "What it shows; by default what is given.",
                                               rules: [.oneOf(["TEXT", "IMAGE", "BOTH"])], error: CommonKeys.invalidData)
            public static let highlighted = OptionKey("Highlighted", "b", doc: "Shown as the default choice.", default: "false")
            public static let systemAction = OptionKey(
                "SystemAction", "s", doc: "What pressing it does to the alert.", default: "DEFAULT_ACTION",
                rules: [.oneOf(["DEFAULT_ACTION", "STEAL_FOCUS", "KEEP_CONTEXT"])], error: CommonKeys.invalidData)

            static let all = [id, text, image, type, highlighted, systemAction]
        }

        public static let alertKeys = [
            Keys.text, Keys.secondaryText, Keys.tertiaryText, Keys.timeout, Keys.audio, Keys.playTone, Keys.showWaitIndicator,
            Keys.softButtons, Keys.icon, Keys.priority, Keys.outliveOwner,
        ]

        public static let speechKeys = [Keys.playTone, Keys.priority, Keys.outliveOwner, Keys.playedAudio]

        public static let presentAlert = MethodDeclaration(
            "PresentAlert", doc: "Copies the alert and queues it; replies at once with its object.",
            in: [ArgumentDeclaration("alert", "a{sv}", doc: "the alert's keys", keys: alertKeys)],
            out: [ArgumentDeclaration("alert", "o", doc: "the alert object")],
            errors: [EarshotContract.invalidArgs] + EarshotContract.errors(.invalidData))
        public static let speak = MethodDeclaration(
            "Speak", doc: "Queues speech without display; it completes like an alert.",
            in: [ArgumentDeclaration("chunks", "a(ss)", doc: "(type, text) speech chunks"),
                 ArgumentDeclaration("options", "a{sv}", doc: "the alert's keys that apply to audio", keys: speechKeys)],
            out: [ArgumentDeclaration("alert", "o", doc: "the alert object")],
            errors: [EarshotContract.invalidArgs] + EarshotContract.errors(.invalidData))

        public static let defaultTimeout = PropertyDeclaration(
            "DefaultTimeout", "d", doc: "Seconds an alert without buttons stays when it gives no Timeout (3..10, default 5).",
            access: .readwrite, errors: EarshotContract.errors(.invalidData))
        public static let buttonTimeout = PropertyDeclaration(
            "ButtonTimeout", "d", doc: "Seconds an alert with buttons waits for a press (default 60).", access: .readwrite,
            errors: EarshotContract.errors(.invalidData))
        public static let displayLines = PropertyDeclaration(
            "DisplayLines", "u", doc: "How many text lines the display has (0..3, default 3).", access: .readwrite,
            errors: EarshotContract.errors(.invalidData))
        public static let current = PropertyDeclaration("Current", "o", doc: "The alert being presented, / when none.")
        public static let queueLength = PropertyDeclaration("QueueLength", "u", doc: "Alerts waiting to be presented.")
        /// The keys of `Capabilities`.
        public enum CapabilityKeys {
            public static let maxSoftButtons = OptionKey("MaxSoftButtons", "u", doc: "The most soft buttons an alert may have.")
            public static let speech = OptionKey("Speech", "as", doc: "The speech chunk types Audio and Speak take.")
            public static let displayLines = OptionKey(Manager.displayLines.name, "u", doc: "The text lines the HMI shows (the property of that name).")
            public static let all = [maxSoftButtons, speech, displayLines]
        }

        public static let capabilities = PropertyDeclaration(
            "Capabilities", "a{sv}", doc: "What the presenter can do.", keys: CapabilityKeys.all)

        public static let interface = InterfaceDeclaration(
            busName, doc: "Queues alerts and speech, and holds the presenter's settings.",
            methods: [presentAlert, speak],
            properties: [defaultTimeout, buttonTimeout, displayLines, current, queueLength, capabilities])
    }

    /// One alert, at `/org/earshot/Alerts1/Alert/N`: its presentation and its completion.
    public enum Alert {
        /// Why an alert ends (`Completed`'s `Reason`).
        public static let endReasons = ["timeout", "button", "dismissed", "cancelled", "preempted", "rate-limited", "queue-full",
                                        "capture-active", "owner-vanished", "interrupted", "file-not-found"]
        /// Where an alert is (`State`).
        public static let states = ["queued", "presenting", "finished"]

        /// The keys of `Completed`'s info.
        public enum CompletionKeys {
            public static let tryAgainTimeMs = OptionKey(
                "TryAgainTimeMs", "u", doc: "When refused: the ms after which the same request would be accepted.")
            public static let pressedButton = OptionKey("PressedButton", "q", doc: "The soft button that ended it.")
            public static let warnings = OptionKey("Warnings", "as", doc: "What could not be presented as asked.")
            public static let reason = OptionKey("Reason", "s", doc: "Why it ended: " + EarshotContract.either(endReasons) + ".")
            public static let focusRequested = OptionKey("FocusRequested", "b", doc: "A STEAL_FOCUS button ended it.")
            static let all = [tryAgainTimeMs, pressedButton, warnings, reason, focusRequested]
        }

        public static let cancel = MethodDeclaration(
            "Cancel", doc: "The owner withdraws the alert: ABORTED.", errors: EarshotContract.errors(.disallowed, .rejected))
        public static let pressButton = MethodDeclaration(
            "PressButton", doc: "The user presses a soft button: SUCCESS with PressedButton.",
            in: [ArgumentDeclaration("id", "q", doc: "the button's Id")],
            errors: EarshotContract.errors(.invalidData, .disallowed, .rejected))
        public static let dismiss = MethodDeclaration(
            "Dismiss", doc: "The user dismisses the alert: SUCCESS.", errors: EarshotContract.errors(.disallowed, .rejected))

        public static let completed = SignalDeclaration(
            "Completed", doc: "The alert ended (broadcast).",
            [ArgumentDeclaration("success", "b", doc: "whether the result counts as success"),
             ArgumentDeclaration("resultCode", "s", doc: "SmartDeviceLink's result code"),
             ArgumentDeclaration("info", "a{sv}", doc: "TryAgainTimeMs u, PressedButton q, Warnings as, Reason s, FocusRequested b",
                                 keys: CompletionKeys.all)])
        public static let buttonPressed = SignalDeclaration(
            "ButtonPressed", doc: "A KEEP_CONTEXT or STEAL_FOCUS button was pressed; the alert stays.",
            [ArgumentDeclaration("id", "q", doc: "the button's Id")])

        public static let state = PropertyDeclaration("State", "s", doc: EarshotContract.either(states) + ".")
        public static let owner = PropertyDeclaration("Owner", "s", doc: "The unique name that presented it.", emitsChangedSignal: .const)
        public static let lines = PropertyDeclaration("Lines", "as", doc: "The text as laid out for DisplayLines.",
                                                      emitsChangedSignal: .const)
        public static let softButtons = PropertyDeclaration(EarshotField.softButtons.name, "aa{sv}", doc: "The buttons as given.",
                                                            emitsChangedSignal: .const, keys: Manager.SoftButtonKeys.all)
        public static let priority = PropertyDeclaration("Priority", "s", doc: "NORMAL, COMMUNICATION, NAVIGATION, VOICECOM or EMERGENCY.",
                                                         emitsChangedSignal: .const)
        public static let showWaitIndicator = PropertyDeclaration("ShowWaitIndicator", "b", doc: "Whether a wait indicator shows.",
                                                                  emitsChangedSignal: .const)
        public static let icon = PropertyDeclaration(EarshotField.icon.name, "s", doc: "The icon's path, empty when none.", emitsChangedSignal: .const)
        public static let resultCode = PropertyDeclaration("ResultCode", "s", doc: "Its result code; empty until it completes.")
        public static let tryAgainTimeMs = PropertyDeclaration(
            "TryAgainTimeMs", "u", doc: "When refused, the ms after which the same request would be accepted; 0 when none.")
        public static let endsAtMonotonicUs = PropertyDeclaration(
            "EndsAtMonotonicUs", "t", doc: "When it ends unless a press, cancel or preemption ends it sooner (CLOCK_MONOTONIC µs); 0 while unknown.")
        public static let startedAtMonotonicUs = PropertyDeclaration(
            "StartedAtMonotonicUs", "t",
            doc: "When its audio's first frame was handed to the output (CLOCK_MONOTONIC µs); 0 until then, and without audio.")

        public static let interface = InterfaceDeclaration(
            "org.earshot.Alerts1.Alert", doc: "One alert: its presentation and its completion.",
            methods: [cancel, pressButton, dismiss],
            signals: [completed, buttonPressed],
            properties: [state, owner, lines, softButtons, priority, showWaitIndicator, icon, resultCode, tryAgainTimeMs,
                         endsAtMonotonicUs, startedAtMonotonicUs])
    }

    public static let service = ServiceDeclaration(
        executable: "earshot-alerts", busName: busName,
        doc: "The alert presenter: a serial queue, text layout, soft buttons, speech and tones, completions with try-again times.",
        managerPath: managerPath, interfaces: [Manager.interface, Alert.interface],
        paths: [Alert.interface.name: managerPath + "/Alert/N"],
        notes: [
            Manager.interface.name: [
                "An alert needs at least one of `Text`, `SecondaryText` or a non-empty `Audio` (`TertiaryText` alone is "
                    + "not enough). An `Icon` or button `Image` that cannot be read does not stop it (its completion carries "
                    + "a warning). A `FILE` chunk that cannot be read fails an alert without text with `FILE_NOT_FOUND`; with "
                    + "text it is skipped and the alert completes with `WARNINGS`.",
                "One alert is presented at a time; the others wait in a serial queue of at most 16.",
                "Text is laid out for `DisplayLines`: the non-empty texts in order; 3 lines give one each; 2 lines give the "
                    + "first, then the other two joined with \" - \"; 1 line joins all with \" - \"; 0 lines show no text.",
                "Audio plays through ALSA: the tone, then the chunks in order; `TEXT` is spoken by espeak-ng, phoneme chunks "
                    + "are turned into espeak-ng phonemes.",
                "An alert that cannot be presented completes at once with `REJECTED`, success false and `TryAgainTimeMs`, "
                    + "the earliest time after which the same request would be taken: over the caller's rate for its "
                    + "priority (at most 4 NORMAL, 6 COMMUNICATION, 15 NAVIGATION, 20 VOICECOM or 60 EMERGENCY alerts in "
                    + "any 60 s), until the oldest of them leaves the window (`rate-limited`); a full queue, until it has "
                    + "room (`queue-full`); below EMERGENCY while a pass-thru records, until it ends (`capture-active`).",
                "`TryAgainTimeMs` is right from the moment a request is refused: a request that would be refused waits "
                    + "for the end it depends on to be known, the presented alert's audio rendered, or a pass-thru just "
                    + "started (its prompt or its device's first read), counting the pass-thru's prompt and its whole "
                    + "MaxDuration. The wait is tens of milliseconds, seconds on a loaded machine, at most 10 s; an end "
                    + "still unknown then is named as 1000 ms, the time after which the service will know more.",
                "A higher-priority alert preempts a lower one being presented, which completes with `ABORTED` (`preempted`).",
            ],
            Alert.interface.name: [
                "An alert without buttons is dismissed after its timeout (`SUCCESS`, `timeout`), or when its audio ends if "
                    + "that is later. An alert with buttons stays until a press, a cancel or `ButtonTimeout`.",
                "`Completed` info may carry `TryAgainTimeMs` (u), `PressedButton` (q), `Warnings` (as), `FocusRequested` "
                    + "(b) and `Reason` (s: `timeout`, `button`, `dismissed`, `cancelled`, `preempted`, `rate-limited`, "
                    + "`queue-full`, `capture-active`, `owner-vanished`, `interrupted`).",
                "`Cancel` removes a queued alert and dismisses a presented one (`ABORTED`). `PressButton` completes with "
                    + "`SUCCESS` and `PressedButton`, except a `KEEP_CONTEXT` or `STEAL_FOCUS` button, which emits "
                    + "`ButtonPressed` and leaves the alert up. `Dismiss` completes with `SUCCESS` (`dismissed`).",
            ],
        ])
}
