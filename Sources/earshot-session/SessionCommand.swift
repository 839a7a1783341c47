import ArgumentParser
import EarshotDBus
import EarshotService
import Foundation

@main
struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshot-session",
        abstract: "The audio session state on ALSA (org.earshot.Session1).",
        discussion: """
            Keeps AVAudioSession's configuration for the whole system (category, mode, options, \
            sample rate and buffer hints, preferred input, data source, polar pattern, \
            orientation, activation), applies it to ALSA in order, stores it in the state file, \
            and with KeepEnforced re-applies it when inputs come and go (inotify on /dev/snd \
            and the ALSA configuration files), when an interruption ends and when the capture \
            service restarts. Activate() arbitrates audio focus between clients.
            """)

    @OptionGroup var bus: BusOptions

    @Option(help: ArgumentHelp("Where the desired state is kept (default: $XDG_STATE_HOME/earshot/session.json).", valueName: "path"))
    var stateFile: String?

    @Option(help: ArgumentHelp("The ALSA PCM reported as the route's output.", valueName: "pcm"))
    var outputDevice = "default"

    @Option(help: ArgumentHelp("Seconds an ended activation object stays on the bus.", valueName: "seconds"))
    var lingerSeconds: Double = 60

    @Option(help: ArgumentHelp("How to notice route changes: inotify, poll (every 0.5 s), or auto (inotify, else poll).",
                               valueName: "mode"))
    var routeWatch = "auto"

    func validate() throws {
        guard lingerSeconds >= 0, lingerSeconds.isFinite else { throw ValidationError("--linger-seconds must be 0 or more") }
        if let stateFile, stateFile.isEmpty { throw ValidationError("--state-file must not be empty") }
        guard ["auto", "inotify", "poll"].contains(routeWatch) else { throw ValidationError("--route-watch must be auto, inotify or poll") }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let settings = SessionService.Settings(
            outputDevice: outputDevice,
            stateFile: StateFile(path: stateFile ?? StateFile.defaultPath(environment: environment)),
            linger: .milliseconds(Int(lingerSeconds * 1000)),
            systemBus: bus.isSystemBus,
            environment: environment,
            routeWatch: routeWatch)
        await ServiceMain.run(executable: "earshot-session", busName: SessionInterfaces.busName, options: bus) { connection, logger in
            let service = SessionService(connection: connection, settings: settings, logger: logger)
            try await service.start()
            return { await service.shutdown() }
        }
    }
}
