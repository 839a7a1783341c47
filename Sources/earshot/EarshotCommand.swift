import ArgumentParser
import Glibc

@main
struct EarshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshot",
        abstract: "The Earshot command-line client: status, capture, alerts, pieces, the audio session and recording.",
        discussion: """
            Talks to the Earshot services on the session bus (--system for the system bus, \
            --address for any bus). Every subcommand prints text for people, or JSON with --json.

            \(ClientExit.discussion)
            """,
        subcommands: [StatusCommand.self, CaptureSubcommand.self, AlertCommand.self, PiecesSubcommand.self,
                      SessionSubcommand.self, RecordCommand.self, HMICommand.self])

    /// argument-parser's own entry point, except that a usage error exits with 2 (as the
    /// help texts say) rather than its EX_USAGE (64).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                Terminal.error(fullMessage(for: error))
                Glibc.exit(ClientExit.usage)
            }
            exit(withError: error)
        }
    }
}
