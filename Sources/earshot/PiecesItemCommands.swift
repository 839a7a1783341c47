import ArgumentParser
import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import Foundation

// The subcommands of `earshot pieces` that act on one piece, named by its id.

/// `earshot pieces get ID`: everything known about a piece.
struct PiecesGetCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Show everything about one piece (Pieces1.Get).",
        discussion: "Unknown ids fail with \(EarshotErrorName.pieceNotFound.name).\n\n\(ClientExit.discussion)")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The piece's id.")
    var id: String

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        let piece = try await client.with(.pieces) { try await $0.pieces.get(id).values }
        if options.json {
            printJSON(.dictionary(piece))
        } else {
            for line in ValueText.lines(piece) { Terminal.line(line) }
        }
        return ClientExit.success
    }
}

/// `earshot pieces export ID --format F --out PATH`: the mix stem written to a file.
struct PiecesExportCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write a piece's mix stem to a file (Pieces1.\(PiecesContract.Manager.exportMixStem.name)).",
        discussion: """
            The service writes the file itself (transcoding on first request), so the path is \
            made absolute here and must be writable by the service's user.

            \(ClientExit.discussion)
            """)

    @OptionGroup var options: ClientOptions

    @Argument(help: "The piece's id.")
    var id: String

    @Option(help: ArgumentHelp("wave, oggVorbis, flac or aacM4A.", valueName: "format"))
    var format = PieceAudioFormat.wave

    @Option(help: ArgumentHelp("The file to write.", valueName: "path"))
    var out: String

    var absolutePath: String {
        URL(fileURLWithPath: out, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true))
            .standardizedFileURL.path
    }

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        let path = absolutePath
        try await client.with(.pieces) { try await $0.pieces.exportMixStem(id, format: format, to: path) }
        if options.json {
            printJSON(.object([("id", .string(id)), ("format", .string(format.rawValue)), ("path", .string(path))]))
        } else {
            Terminal.line("exported \(id) as \(format.rawValue) to \(path)")
        }
        return ClientExit.success
    }
}

/// `earshot pieces delete ID`.
struct PiecesDeleteCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a piece (Pieces1.Delete; its author, root or the service's user).",
        discussion: "Others get org.earshot.Error.Disallowed.\n\n\(ClientExit.discussion)")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The piece's id.")
    var id: String

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        try await client.with(.pieces) { try await $0.pieces.delete(id) }
        if options.json {
            printJSON(.object([("deleted", .string(id))]))
        } else {
            Terminal.line("deleted \(id)")
        }
        return ClientExit.success
    }
}

/// `earshot pieces lineage ID`: the pieces it is based on and those based on it.
struct PiecesLineageCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "lineage", abstract: "Show a piece's ancestors and descendants, nearest first (Pieces1.Lineage).",
        discussion: ClientExit.discussion)

    @OptionGroup var options: ClientOptions

    @Argument(help: "The piece's id.")
    var id: String

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        let (ancestors, descendants) = try await client.with(.pieces) { try await $0.pieces.lineage(id) }
        if options.json {
            printJSON(.object([("ancestors", .array(ancestors.map(JSONValue.string))),
                               ("descendants", .array(descendants.map(JSONValue.string)))]))
        } else {
            Terminal.line("ancestors:" + (ancestors.isEmpty ? " none" : ""))
            for ancestor in ancestors { Terminal.line("  \(ancestor)") }
            Terminal.line("descendants:" + (descendants.isEmpty ? " none" : ""))
            for descendant in descendants { Terminal.line("  \(descendant)") }
        }
        return ClientExit.success
    }
}

extension PieceAudioFormat: ExpressibleByArgument {}
