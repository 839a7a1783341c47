import ArgumentParser
import EarshotDBus
import EarshotEcho
import EarshotService

/// `earshot-bench`: Earshot's benchmarks, each run by `./deploy/earshot-dev bench NAME`,
/// which builds the release services they start next to it.
@main
struct EarshotBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshot-bench",
        abstract: "Earshot benchmarks.",
        discussion: """
            Run each as `./deploy/earshot-dev bench NAME` (e.g. `bench dbus`, `bench capture`), \
            which builds the release services a benchmark starts (as deploy/install builds \
            them) and earshot-bench beside them.
            """,
        subcommands: [DBusBenchmarkCommand.self, CaptureBenchmarkCommand.self, AlertsBenchmarkCommand.self, SessionBenchmarkCommand.self, PolicyBenchmarkCommand.self, PiecesBenchmarkCommand.self, FootprintBenchmarkCommand.self, QuietBenchmarkCommand.self, EchoCancellationBenchmarkCommand.self, FuzzCommand.self, LoadCommand.self, ServeEchoCommand.self,
                      LinkOrderCommand.self])
}

/// The echo server the D-Bus benchmark starts: this same binary, re-executed with
/// `serve-echo --address ADDR`. Hidden from help; not meant to be run by hand.
struct ServeEchoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve-echo",
        abstract: "Serve org.earshot.Echo1 (used by `earshot-bench dbus`).",
        shouldDisplay: false)

    @OptionGroup var bus: BusOptions

    func run() async throws {
        await ServiceMain.run(executable: "earshot-bench-echo", busName: EchoService.busName, options: bus) { connection, _ in
            let service = EchoService()
            try service.export(on: connection)
            return { service.shutdown() }
        }
    }
}
