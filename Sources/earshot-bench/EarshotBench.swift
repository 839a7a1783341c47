import ArgumentParser
import EarshotDBus
import EarshotEcho
import EarshotService

/// `earshot-bench`: Earshot's benchmarks.
///
///     swift run -c release earshot-bench dbus
///     swift build -c release --product earshot-capture && swift run -c release earshot-bench capture
///     swift build -c release --product earshot-alerts && swift run -c release earshot-bench alerts
@main
struct EarshotBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshot-bench",
        abstract: "Earshot benchmarks.",
        discussion: """
            Run `swift run -c release earshot-bench dbus` for the D-Bus benchmark, \
            `./deploy/earshot-dev bench capture` (which also builds earshot-capture in release \
            mode) for the capture benchmark, and `./deploy/earshot-dev bench alerts` (which also \
            builds earshot-alerts in release mode) for the alerts benchmark.
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
