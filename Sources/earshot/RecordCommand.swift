import ArgumentParser
import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus

/// `earshot record`: a whole recording through the orchestrator, followed to its end.
struct RecordCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a piece end to end (Orchestrator1.\(OrchestratorContract.Manager.recordPiece.name)) and follow the job.",
        discussion: """
            The orchestrator activates the session, speaks the prompt, captures, stores the \
            audio as a piece and confirms with an alert. Each step of the job is printed as it \
            begins (preparing…, prompting…, recording…, storing…, confirming…), then the result \
            code and the new piece's id. Ctrl-C cancels the job (no piece is kept).

            Exit status: 0 SUCCESS or WARNINGS; 4 any other result code; 3 \
            org.earshot.Orchestrator1 is not running (or left during the job); 1 an error reply \
            (e.g. \(EarshotErrorName.titleTooShort.name)); 2 a usage error; 130 a second Ctrl-C.
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

    var request: RecordPieceRequest {
        var request = RecordPieceRequest(title: title, prompt: prompt, maxDurationMs: maxMs)
        request.samplingRate = rate
        request.bitsPerSample = bits
        request.endOnSilenceMs = endOnSilenceMs
        request.displayText1 = displayText
        request.tempo = tempo
        request.description = pieceDescription
        return request
    }

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        try await client.require(.orchestrator)
        let events = ClientEvents()
        defer { events.stop() }
        try await events.watch(.orchestrator, on: client)
        // From here Ctrl-C is an event: one that comes during the call cancels the job once
        // its path is known.
        events.catchInterrupts()
        let job = try await client.with(.orchestrator) { [request] in try await $0.orchestrator.recordPiece(request) }
        events.forward(job)

        var states = [JobState.preparing]
        if !options.json { Terminal.line("preparing…") }
        var cancelled = false
        while let event = await events.next() {
            switch event {
            case .jobState(let state):
                states.append(state)
                if !options.json { Terminal.line("\(state.rawValue)…") }
            case .jobFinished(.success(let result)):
                report(job: job.path, result, states: states + [.finished])
                return ClientExit.isSuccessful(result.resultCode.rawValue) ? ClientExit.success : ClientExit.unsuccessful
            case .jobFinished(.failure(let error)):
                throw ClientFailure.from(error, service: BusService.orchestrator.name)
            case .interrupted:
                if cancelled { return ClientExit.interrupted }
                cancelled = true
                Terminal.error("earshot: cancelling \(job.path.rawValue) (Ctrl-C again to quit at once)")
                try? await job.cancel()
            case .signal, .key, .inputClosed, .tick, .alertCompleted, .chunk, .passThruFinished, .session:
                continue
            case .serviceGone(let name):
                throw .notRunning(name)
            }
        }
        throw .failed("the wait for \(job.path.rawValue) ended without its Finished")
    }

    func report(job: ObjectPath, _ result: JobResult, states: [JobState]) {
        let code = result.resultCode.rawValue
        let reason = result.reason.isEmpty ? nil : result.reason
        if options.json {
            printJSON(.object([
                ("job", .string(job.rawValue)), ("resultCode", .string(code)), ("pieceId", .string(result.pieceId)),
                ("reason", reason.map(JSONValue.string) ?? .null), ("framesCaptured", result.framesCaptured.map(JSONValue.uint) ?? .null),
                ("states", .array(states.map { .string($0.rawValue) })),
            ]))
            return
        }
        Terminal.line(code + (reason.map { " (\($0))" } ?? ""))
        if !result.pieceId.isEmpty { Terminal.line("piece: \(result.pieceId)") }
        if let frames = result.framesCaptured { Terminal.line("frames: \(frames)") }
    }
}
