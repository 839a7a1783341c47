import ArgumentParser
import EarshotClient
import EarshotDBus
import Foundation

/// `earshot pieces list`: a page of pieces matching a query.
struct PiecesListCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List pieces (Pieces1.List), filtered, sorted and paged.",
        discussion: """
            Prints one line per piece (id, title, tempo, length, creation time) and the total \
            number of matches; --json prints {"total": N, "pieces": [summary, …]}.

            \(ClientExit.discussion)
            """)

    @OptionGroup var options: ClientOptions

    @Option(name: .customLong("title-contains"), help: ArgumentHelp("Only titles containing this text.", valueName: "text"))
    var titleContains: String?

    @Option(name: .customLong("tempo-min"), help: ArgumentHelp("Only pieces at least this fast.", valueName: "BPM"))
    var tempoMin: Double?

    @Option(name: .customLong("tempo-max"), help: ArgumentHelp("Only pieces at most this fast.", valueName: "BPM"))
    var tempoMax: Double?

    @Option(help: ArgumentHelp("Only pieces of this tonality: unknown, atonal or tonal.", valueName: "tonality"))
    var tonality: PieceTonality?

    @Option(help: ArgumentHelp("Only pieces dropped by this user.", valueName: "user"))
    var author: String?

    @Option(name: .customLong("based-on"), help: ArgumentHelp("Only direct children of this piece.", valueName: "id"))
    var basedOn: String?

    @Option(name: .customLong("sort-by"), help: ArgumentHelp("created (default), title, tempo or length.", valueName: "key"))
    var sortBy: PieceQuery.Order?

    @Flag(help: "Sort in descending order.")
    var descending = false

    @Option(help: ArgumentHelp("Skip this many matches.", valueName: "n"))
    var offset: UInt32?

    @Option(help: ArgumentHelp("At most this many pieces (default 50, at most 500).", valueName: "n"))
    var limit: UInt32?

    var query: PieceQuery {
        var query = PieceQuery()
        query.titleContains = titleContains
        query.tempoMin = tempoMin
        query.tempoMax = tempoMax
        query.tonality = tonality
        query.author = author
        query.basedOn = basedOn
        query.sortBy = sortBy
        query.descending = descending
        query.offset = offset
        query.limit = limit
        return query
    }

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        let pieces = try await client.with(.pieces) { try await $0.pieces.list(query) }
        let total = pieces.total
        let page = pieces.pieces.map(\.values)
        if options.json {
            printJSON(.object([("total", .uint(UInt64(total))), ("pieces", .array(page.map(JSONValue.dictionary)))]))
            return ClientExit.success
        }
        let first = Int(offset ?? 0)
        guard !page.isEmpty else {
            Terminal.line(total == 0 ? "no pieces" : "no pieces from \(first + 1) on (\(total) in all)")
            return ClientExit.success
        }
        let rows = pieces.pieces.map { piece -> [String] in
            [piece.id, piece.title, piece.tempo.map { ValueText.number($0) } ?? "-",
             String(format: "%.2f s", Double(piece.lengthMicroseconds) / 1_000_000), piece.createdAt]
        }
        TextTable.print(header: ["ID", "TITLE", "TEMPO", "LENGTH", "CREATED"], rows: rows)
        Terminal.line("pieces \(first + 1)–\(first + page.count) of \(total)")
        return ClientExit.success
    }
}

extension PieceTonality: ExpressibleByArgument {}
extension PieceQuery.Order: ExpressibleByArgument {}
