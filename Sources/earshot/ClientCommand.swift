import ArgumentParser
import EarshotService

/// The flags every subcommand takes: the bus (`--system`, `--address`, `--log-level`)
/// and `--json`.
struct ClientOptions: ParsableArguments {
    @OptionGroup var bus: BusOptions

    @Flag(help: "Print JSON (one document per line) instead of text meant for people.")
    var json = false
}

/// A subcommand that talks to the bus: it connects, does its work and returns an exit
/// status; failures are printed as `earshot: …` with the status of their kind.
protocol ClientCommand: AsyncParsableCommand {
    var options: ClientOptions { get }

    /// Does the command's work; returns the exit status (0, or 4 for an unsuccessful
    /// result code). Throwing ends the command with the failure's status.
    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32
}

extension ClientCommand {
    func run() async throws {
        ServiceMain.bootstrapLogging(label: "earshot", level: options.bus.logLevel)
        let status: Int32
        do {
            let client = try BusClient.open(options.bus)
            do {
                status = try await execute(client)
            } catch {
                client.close()
                throw error
            }
            client.close()
        } catch {
            status = ClientFailure.from(error).report()
        }
        if status != ClientExit.success { throw ExitCode(status) }
    }

    /// Prints `value` as one line of JSON.
    func printJSON(_ value: JSONValue) { Terminal.line(value.text) }
}
