import ContractCore
/// `org.earshot.Orchestrator1`: whole tasks across the services, and their health.
public enum OrchestratorContract {
    public static let busName = "org.earshot.Orchestrator1"
    public static let managerPath = "/org/earshot/Orchestrator1"

    /// The manager: starts jobs and watches the other services.
    public enum Manager {
        static let invalidData = EarshotErrorName.invalidData.name
        /// The keys of `RecordPiece`'s request besides the piece's metadata
        /// (`PiecesContract.Manager.metadataKeys`), which it passes on to `Drop`.
        public enum Keys {
            public static let title = OptionKey(
                .title, "s", doc: "The piece's title, 1 to 50 Unicode scalars (checked before recording).", required: true,
                rules: [.range(1...50, unit: "scalars")],
                errors: [EarshotErrorName.titleTooShort.name, EarshotErrorName.titleTooLong.name])
            public static let prompt = CommonKeys.text("Prompt", doc: "Spoken before recording.")
            public static let displayText1 = CaptureContract.Manager.Keys.displayText1
            public static let displayText2 = CaptureContract.Manager.Keys.displayText2
            public static let maxDuration = OptionKey("MaxDuration", "u", doc: "The longest it records, in ms.", default: "10000",
                                                      rules: [.range(1...1_000_000, unit: "ms")], error: invalidData)
            public static let samplingRate = OptionKey(.samplingRate, "u", doc: "Frames per second.", default: "16000",
                                                       rules: [.oneOf(["8000", "16000", "22050", "44100", "48000"])], error: invalidData)
            public static let bitsPerSample = OptionKey(.bitsPerSample, "u", doc: "8 or 16.", default: "16",
                                                        rules: [.oneOf(["8", "16"])], error: invalidData)
            public static let endOnSilenceMs = CaptureContract.Manager.Keys.endOnSilenceMs
            public static let outliveOwner = CaptureContract.Manager.Keys.outliveOwner
        }

        public static let requestKeys = [
            Keys.title, Keys.prompt, Keys.displayText1, Keys.displayText2, Keys.maxDuration, Keys.samplingRate, Keys.bitsPerSample,
            Keys.endOnSilenceMs, Keys.outliveOwner,
        ] + PiecesContract.Manager.metadataKeys

        public static let recordPiece = MethodDeclaration(
            "RecordPiece", doc: "Prompt, capture, store and confirm a piece; replies at once with the job.",
            in: [ArgumentDeclaration("request", "a{sv}", doc: "Title, the prompt, the capture's keys and the piece's metadata",
                                     keys: requestKeys)],
            out: [ArgumentDeclaration("job", "o", doc: "the job object")],
            errors: [EarshotContract.invalidArgs] + EarshotContract.errors(.invalidData, .rejected))

        public static let serviceChanged = SignalDeclaration(
            "ServiceChanged", doc: "A watched service came or went.",
            [ArgumentDeclaration("name", "s", doc: "its well-known name"), ArgumentDeclaration("running", "b", doc: "whether it has an owner")])

        public static let services = PropertyDeclaration(
            "Services", "a{s(sb)}", doc: "Each watched well-known name → (unique owner or \"\", running).")

        public static let interface = InterfaceDeclaration(
            busName, doc: "Starts jobs and watches the other services.",
            methods: [recordPiece], signals: [serviceChanged], properties: [services])
    }

    /// One job, at `/org/earshot/Orchestrator1/Job/N`.
    public enum Job {
        public static let cancel = MethodDeclaration(
            "Cancel", doc: "The owner cancels the job: ABORTED.", errors: EarshotContract.errors(.disallowed, .rejected))

        public static let finished = SignalDeclaration(
            "Finished", doc: "The job ended.",
            [ArgumentDeclaration("resultCode", "s", doc: "SmartDeviceLink's result code"),
             ArgumentDeclaration("pieceId", "s", doc: "the stored piece, empty when none"),
             ArgumentDeclaration("info", "a{sv}", doc: "Reason s and what each step reported", keys: FinishedKeys.all)])

        /// The keys of `Finished`'s info.
        public enum FinishedKeys {
            public static let reason = OptionKey("Reason", "s", doc: "Why it ended, in words.")
            public static let title = OptionKey(.title, "s", doc: "The piece's title.")
            public static let framesCaptured = OptionKey("FramesCaptured", "t", doc: "Frames the pass-thru captured.")
            static let all = [reason, title, framesCaptured]
        }

        /// The steps a job goes through (`State`).
        public static let states = ["preparing", "prompting", "recording", "storing", "confirming", "finished"]
        public static let state = PropertyDeclaration("State", "s", doc: EarshotContract.either(states) + ".")
        public static let pieceId = PropertyDeclaration("PieceId", "s", doc: "The stored piece, empty until stored.")
        public static let resultCode = PropertyDeclaration("ResultCode", "s", doc: "Its result code; empty until it finishes.")
        public static let framesCaptured = PropertyDeclaration("FramesCaptured", "t", doc: "Frames captured so far.")
        public static let title = PropertyDeclaration(EarshotField.title.name, "s", doc: "The piece's title.", emitsChangedSignal: .const)
        public static let owner = PropertyDeclaration("Owner", "s", doc: "The unique name that started it.", emitsChangedSignal: .const)

        public static let interface = InterfaceDeclaration(
            "org.earshot.Orchestrator1.Job", doc: "One job: its steps, its piece and its end.",
            methods: [cancel], signals: [finished], properties: [state, pieceId, resultCode, framesCaptured, title, owner])
    }

    public static let service = ServiceDeclaration(
        executable: "earshot-orchestrator", busName: busName,
        doc: "Coordinates whole tasks (record a piece: prompt, capture, store, confirm) and watches the others' health.",
        managerPath: managerPath, interfaces: [Manager.interface, Job.interface],
        paths: [Job.interface.name: managerPath + "/Job/N"],
        notes: [
            Manager.interface.name: [
                "`RecordPiece` activates the session, runs a pass-thru (speaking `Prompt` first), collects its audio, drops "
                    + "it as a piece with a WAV mix stem and the metadata given, then presents a confirmation alert, "
                    + "retrying after its `TryAgainTimeMs` when it is refused.",
                "`Services` maps each watched well-known name to its unique owner (\"\" when none) and whether it runs.",
            ],
            Job.interface.name: [
                "`State` goes `preparing`, `prompting`, `recording`, `storing`, `confirming`, `finished`. `Finished` carries "
                    + "the result code and the stored piece's id.",
            ],
        ])
}
