import ArgumentParser
import EarshotContract
import EarshotDBus
import EarshotService
import FoundationEssentials
import SessionCore

@main
struct SessionCommand: ServiceCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshot-session",
        abstract: "The audio session state on ALSA and audio focus on the system mixer (org.earshot.Session1).",
        discussion: """
            Keeps AVAudioSession's configuration for the whole system (category, mode, options, \
            sample rate and buffer hints, preferred input, data source, polar pattern, \
            orientation, activation), applies it to ALSA in order, stores it in the state file, \
            and with \(SessionContract.Manager.keepEnforced.name) re-applies it when inputs come and go (inotify on /dev/snd \
            and the ALSA configuration files), when an interruption ends and when the capture \
            service restarts. Activate() arbitrates audio focus between clients, and on the \
            system mixer (PipeWire) other programs' streams are ducked or muted while an \
            activation asks for it (in each stream's software levels, which WirePlumber does \
            not store), and restored when it ends, when the service stops, and at the next \
            start after a crash.
            """)

    @OptionGroup var bus: BusOptions
    @OptionGroup var introspection: IntrospectOption<SessionContract>

    @Option(help: ArgumentHelp("Where the desired state is kept (default: $XDG_STATE_HOME/earshot/session.json).", valueName: "path"))
    var stateFile: String?

    @Option(help: ArgumentHelp("The ALSA PCM reported as the route's output.", valueName: "pcm"))
    var outputDevice = "default"

    @Option(help: ArgumentHelp("Seconds an ended activation object stays on the bus.", valueName: "seconds"))
    var lingerSeconds: Double = 60

    @Option(help: ArgumentHelp("How to notice route changes: inotify, poll (every 0.5 s), or auto (inotify, else poll).",
                               valueName: "mode"))
    var routeWatch = "auto"

    @Option(help: ArgumentHelp("The system mixer the focus policy acts on: pipewire, none, or auto (pipewire as soon as a PipeWire daemon answers, at start or later).",
                               valueName: "mixer"))
    var mixer = "auto"

    @Option(help: ArgumentHelp("Changes to the standard role table ('Role = media|exempt' a line, '* = …' for roles not listed); Emergency is always exempt.",
                               valueName: "file"))
    var policy: String?

    func validate() throws {
        guard MixerChoice(rawValue: mixer) != nil else { throw ValidationError("--mixer must be auto, pipewire or none") }
        _ = try roleTable()
        guard lingerSeconds >= 0, lingerSeconds.isFinite else { throw ValidationError("--linger-seconds must be 0 or more") }
        if let stateFile, stateFile.isEmpty { throw ValidationError("--state-file must not be empty") }
        guard ["auto", "inotify", "poll"].contains(routeWatch) else { throw ValidationError("--route-watch must be auto, inotify or poll") }
    }

    /// The `--policy` file's table, or the standard one; a file that does not read stops
    /// the service at start, saying where.
    func roleTable() throws -> RoleTable {
        guard let policy else { return .standard }
        let text: String
        do {
            text = try String(contentsOfFile: policy, encoding: .utf8)
        } catch {
            throw ValidationError("--policy \(policy): cannot read it (\(error))")
        }
        do {
            return try RoleTable.parse(text)
        } catch {
            throw ValidationError("--policy \(policy): \(error)")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let statePath = stateFile ?? StateFile.defaultPath(environment: environment)
        let settings = SessionService.Settings(
            outputDevice: outputDevice,
            stateFile: StateFile(path: statePath),
            linger: .milliseconds(Int(lingerSeconds * 1000)),
            systemBus: bus.isSystemBus,
            environment: environment,
            routeWatch: routeWatch,
            mixer: MixerChoice(rawValue: mixer) ?? .auto,
            roles: try roleTable(),
            policyPath: policy,
            earlierLedgerPath: URL(filePath: statePath).deletingLastPathComponent().appending(path: "mixer-ledger.json").path)
        await ServiceMain.run(SessionContract.service, options: bus) { connection, logger in
            let service = SessionService(connection: connection, settings: settings, logger: logger)
            try await service.start()
            return { await service.shutdown() }
        }
    }
}
