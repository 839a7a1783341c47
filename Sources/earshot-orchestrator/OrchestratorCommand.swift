import ArgumentParser
import EarshotContract
import EarshotDBus
import EarshotService

@main
struct OrchestratorCommand: ServiceCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshot-orchestrator",
        abstract: "Whole tasks across the Earshot services, and their health (org.earshot.Orchestrator1).",
        discussion: """
            \(OrchestratorContract.Manager.recordPiece.name): activate the audio session, run a microphone pass-thru with a spoken \
            prompt, collect its audio, drop it as a piece (WAV mix stem) with the given metadata, \
            and confirm with an alert, retrying after the alert service's \(AlertsContract.Alert.CompletionKeys.tryAgainTimeMs.name). \
            Services/\(OrchestratorContract.Manager.serviceChanged.name) follow the other services on the bus.
            """)

    @OptionGroup var bus: BusOptions
    @OptionGroup var introspection: IntrospectOption<OrchestratorContract>

    @Option(help: ArgumentHelp("Seconds a finished job object stays on the bus.", valueName: "seconds"))
    var lingerSeconds: Double = 60

    func validate() throws {
        guard lingerSeconds >= 0, lingerSeconds.isFinite else { throw ValidationError("--linger-seconds must be 0 or more") }
    }

    func run() async throws {
        let settings = OrchestratorService.Settings(linger: .milliseconds(Int(lingerSeconds * 1000)),
                                                    systemBus: bus.isSystemBus)
        await ServiceMain.run(OrchestratorContract.service, options: bus) { connection, logger in
            let service = OrchestratorService(connection: connection, settings: settings, logger: logger)
            try await service.start()
            return { await service.shutdown() }
        }
    }
}
