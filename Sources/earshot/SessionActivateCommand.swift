import ArgumentParser
import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus

/// `earshot session activate`: a claim on audio focus, held until Ctrl-C.
struct SessionActivateCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "activate", abstract: "Claim audio focus (Session1.Activate) and hold it until Ctrl-C.",
        discussion: """
            An activation lasts as long as its owner is on the bus, so this command stays: it \
            activates with the category, mode and options given, prints the activation's path \
            (then 'holding …' on stderr), prints each Interruption of it (began, ended) as it \
            comes, and on Ctrl-C, SIGTERM or after --seconds deactivates and exits. With a \
            system mixer, --duck-others lowers every other program's audio to the session's \
            \(SessionContract.Manager.duckLevel.name) meanwhile, and an activation without --mix-with-others mutes it. With \
            --json the path and each interruption are JSON documents, one a line.

            Exit status: 0 after Ctrl-C, SIGTERM or --seconds; 3 org.earshot.Session1 is not \
            running and the bus cannot start it, or it left the bus meanwhile (the activation \
            ended with it); 1 an error reply (e.g. \(EarshotErrorName.invalidCategory.name)); 2 a \
            usage error.
            """)

    @OptionGroup var options: ClientOptions

    @Option(help: ArgumentHelp("ambient, soloAmbient, playback, record, playAndRecord or multiRoute.", valueName: "category"))
    var category = "playback"

    @Option(help: ArgumentHelp("default, voiceChat, videoRecording, measurement, moviePlayback, spokenAudio or gameChat.",
                               valueName: "mode"))
    var mode: String?

    @Flag(name: .customLong("duck-others"), help: "Lower other audio while the activation holds (the duckOthers option).")
    var duckOthers = false

    @Flag(name: .customLong("mix-with-others"), help: "Mix with other audio instead of interrupting it (the mixWithOthers option).")
    var mixWithOthers = false

    @Option(name: .customLong("option"), help: ArgumentHelp("Any other category option, e.g. interruptSpokenAudioAndMixWithOthers (repeatable).",
                                                            valueName: "option"))
    var categoryOptions: [String] = []

    @Option(name: .customLong("audio-stream"), help: ArgumentHelp("The PipeWire node name of this activation's own audio (never ducked or muted by it).",
                                                                 valueName: "node"))
    var audioStream: String?

    @Option(help: ArgumentHelp("Deactivate after this many seconds instead of waiting for Ctrl-C.", valueName: "seconds"))
    var seconds: Double?

    func validate() throws {
        if let seconds, !(seconds > 0 && seconds.isFinite) { throw ValidationError("--seconds must be more than 0") }
    }

    var allOptions: [String] { (duckOthers ? ["duckOthers"] : []) + (mixWithOthers ? ["mixWithOthers"] : []) + categoryOptions }

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        try await client.require(.session)
        let events = ClientEvents()
        defer { events.stop() }
        // Subscribed first: an interruption may come with the reply.
        events.forward(try await client.with(.session) { try await $0.session.events() })
        try await events.watch(.session, on: client)
        events.catchInterrupts()
        let activation = try await client.with(.session) { [category, allOptions, mode, audioStream] in
            try await $0.session.activate(category: category, options: allOptions, mode: mode, audioStream: audioStream)
        }
        if options.json {
            printJSON(.object([("activation", .string(activation.path.rawValue))]))
        } else {
            Terminal.line(activation.path.rawValue)
        }
        Terminal.error("holding \(activation.path.rawValue) (Ctrl-C to end it)")
        if let seconds { events.tick(every: .milliseconds(Int(seconds * 1000))) }
        while let event = await events.next() {
            switch event {
            case .session(.interruption(let type, let details)):
                if options.json {
                    printJSON(.object([("interruption", .string(type))] + details.keys.sorted().map { ($0, JSONValue(details[$0]!)) }))
                } else {
                    let text = details.keys.sorted().map { "\($0) \(ValueText.describe(details[$0]!))" }.joined(separator: ", ")
                    Terminal.line("Interruption \(type)" + (text.isEmpty ? "" : " (\(text))"))
                }
            case .interrupted, .tick:
                try? await activation.deactivate()
                return ClientExit.success
            case .serviceGone(let name):
                Terminal.error("earshot: \(name) left the bus; the activation ended with it")
                return ClientExit.notRunning
            case .session, .signal, .key, .inputClosed, .alertCompleted, .chunk, .passThruFinished, .jobState, .jobFinished:
                continue
            }
        }
        return ClientExit.success
    }
}
