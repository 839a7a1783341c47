import ArgumentParser

/// `earshot pieces …`: the piece store (org.earshot.Pieces1).
struct PiecesSubcommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pieces",
        abstract: "List, inspect, drop, export and delete pieces in the piece store (Pieces1).",
        discussion: ClientExit.discussion,
        subcommands: [PiecesListCommand.self, PiecesGetCommand.self, PiecesDropCommand.self, PiecesExportCommand.self,
                      PiecesDeleteCommand.self, PiecesLineageCommand.self])
}
