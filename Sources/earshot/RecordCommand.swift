import ArgumentParser
import EarshotContract
import EarshotDBus

/// `earshot record`: a whole recording through the orchestrator, followed to its end.
struct RecordCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a piece end to end (Orchestrator1.RecordPiece) and follow the job.",
        discussion: """
            The orchestrator activates the session, speaks the prompt, captures, stores the \
            audio as a piece and confirms with an alert. Each step of the job is printed as it \
            begins (preparing…, prompting…, recording…, storing…, confirming…), then the result \
            code and the new piece's id. Ctrl-C cancels the job (no piece is kept).

            Exit status: 0 SUCCESS or WARNINGS; 4 any other result code; 3 \
            org.earshot.Orchestrator1 is not running (or left during the job); 1 an error reply \
            (e.g. org.earshot.Error.TitleTooShort); 2 a usage error; 130 a second Ctrl-C.
            """)

    @OptionGroup var options: ClientOptions

    @Option(help: ArgumentHelp("The piece's title (1..50 characters).", valueName: "text"))
    var title: String

    @Option(help: ArgumentHelp("Spoken before recording starts.", valueName: "text"))
    var prompt: String?

    @Option(name: .customLong("max-ms"), help: ArgumentHelp("The longest the recording may last (default 10000).", valueName: "ms"))
    var maxMs: UInt32?

    @Option(help: ArgumentHelp("Sampling rate (default 16000).", valueName: "Hz"))
    var rate: UInt32?

    @Option(help: ArgumentHelp("Bits per sample, 8 or 16 (default 16).", valueName: "8|16"))
    var bits: UInt32?

    @Option(name: .customLong("end-on-silence-ms"),
            help: ArgumentHelp("End after this much silence following speech.", valueName: "ms"))
    var endOnSilenceMs: UInt32?

    @Option(name: .customLong("display-text"), help: ArgumentHelp("A line the HMI shows while recording.", valueName: "text"))
    var displayText: String?

    @Option(help: ArgumentHelp("The piece's tempo.", valueName: "BPM"))
    var tempo: Double?

    @Option(name: .customLong("description"), help: ArgumentHelp("The piece's description.", valueName: "text"))
    var pieceDescription: String?

    var request: [String: DBusValue] {
        var request: [String: DBusValue] = ["Title": .string(title)]
        if let prompt { request["Prompt"] = .string(prompt) }
        if let maxMs { request["MaxDuration"] = .uint32(maxMs) }
        if let rate { request["SamplingRate"] = .uint32(rate) }
        if let bits { request["BitsPerSample"] = .uint32(bits) }
        if let endOnSilenceMs { request["EndOnSilenceMs"] = .uint32(endOnSilenceMs) }
        if let displayText { request["DisplayText1"] = .string(displayText) }
        if let tempo { request["Tempo"] = .double(tempo) }
        if let pieceDescription { request["Description"] = .string(pieceDescription) }
        return request
    }

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        try await client.require(.orchestrator)
        let events = ClientEvents()
        defer { events.stop() }
        // One subscription for the job's PropertiesChanged and Finished keeps them in order.
        do {
            events.forward(try await client.connection.subscribe(MatchRule(sender: BusService.orchestrator.name,
                                                                           pathNamespace: BusService.orchestrator.path)))
        } catch {
            throw ClientFailure.from(error)
        }
        try await events.watch(.orchestrator, on: client)
        // From here Ctrl-C is an event: one that comes during the call cancels the job once
        // its path is known.
        events.catchInterrupts()
        let reply = try await client.call(.orchestrator, OrchestratorContract.Manager.recordPiece.name, [.vardict(request)])
        guard let job = reply.first?.objectPathValue else { throw .failed("RecordPiece replied \(reply)") }

        var states = ["preparing"]
        if !options.json { Terminal.line("preparing…") }
        var cancelled = false
        while let event = await events.next() {
            switch event {
            case .signal(let message):
                guard message.path == job else { continue }
                if message.member == "PropertiesChanged", message.body.count >= 2,
                   let state = message.body[1].stringKeyedValue?["State"]?.stringValue, state != states.last {
                    states.append(state)
                    if !options.json && state != "finished" { Terminal.line("\(state)…") }
                } else if message.member == OrchestratorContract.Job.finished.name, message.interface == RequestInterface.job,
                          message.body.count == 3 {
                    let code = message.body[0].stringValue ?? ""
                    report(job: job, code: code, pieceID: message.body[1].stringValue ?? "",
                           info: message.body[2].stringKeyedValue ?? [:], states: states)
                    return ClientExit.isSuccessful(code) ? ClientExit.success : ClientExit.unsuccessful
                }
            case .interrupted:
                if cancelled { return ClientExit.interrupted }
                cancelled = true
                Terminal.error("earshot: cancelling \(job.rawValue) (Ctrl-C again to quit at once)")
                _ = try? await client.call(.orchestrator, OrchestratorContract.Job.cancel.name, path: job, interface: RequestInterface.job)
            case .key, .inputClosed, .tick, .alertCompleted, .chunk, .passThruFinished:
                continue
            case .serviceGone(let name):
                throw .notRunning(name)
            }
        }
        throw .failed("the wait for \(job.rawValue) ended without its Finished")
    }

    func report(job: ObjectPath, code: String, pieceID: String, info: [String: DBusValue], states: [String]) {
        let reason = info["Reason"]?.stringValue
        let frames = info["FramesCaptured"]?.uint64Value
        if options.json {
            printJSON(.object([
                ("job", .string(job.rawValue)), ("resultCode", .string(code)), ("pieceId", .string(pieceID)),
                ("reason", reason.map(JSONValue.string) ?? .null), ("framesCaptured", frames.map(JSONValue.uint) ?? .null),
                ("states", .array(states.map(JSONValue.string))),
            ]))
            return
        }
        Terminal.line(code + (reason.map { " (\($0))" } ?? ""))
        if !pieceID.isEmpty { Terminal.line("piece: \(pieceID)") }
        if let frames { Terminal.line("frames: \(frames)") }
    }
}
