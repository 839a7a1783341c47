import ArgumentParser
import EarshotContract
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
    var tonality: String?

    @Option(help: ArgumentHelp("Only pieces dropped by this user.", valueName: "user"))
    var author: String?

    @Option(name: .customLong("based-on"), help: ArgumentHelp("Only direct children of this piece.", valueName: "id"))
    var basedOn: String?

    @Option(name: .customLong("sort-by"), help: ArgumentHelp("created (default), title, tempo or length.", valueName: "key"))
    var sortBy: String?

    @Flag(help: "Sort in descending order.")
    var descending = false

    @Option(help: ArgumentHelp("Skip this many matches.", valueName: "n"))
    var offset: UInt32?

    @Option(help: ArgumentHelp("At most this many pieces (default 50, at most 500).", valueName: "n"))
    var limit: UInt32?

    var query: [String: DBusValue] {
        var query: [String: DBusValue] = [:]
        if let titleContains { query["TitleContains"] = .string(titleContains) }
        if let tempoMin { query["TempoMin"] = .double(tempoMin) }
        if let tempoMax { query["TempoMax"] = .double(tempoMax) }
        if let tonality { query["Tonality"] = .string(tonality) }
        if let author { query["Author"] = .string(author) }
        if let basedOn { query["BasedOn"] = .string(basedOn) }
        if let sortBy { query["SortBy"] = .string(sortBy) }
        if descending { query["Descending"] = .boolean(true) }
        if let offset { query["Offset"] = .uint32(offset) }
        if let limit { query["Limit"] = .uint32(limit) }
        return query
    }

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        let reply = try await client.call(.pieces, PiecesContract.Manager.list.name, [.vardict(query)])
        guard reply.count == 2, let pieces = reply[0].arrayValue?.compactMap(\.stringKeyedValue), let total = reply[1].uint32Value else {
            throw .failed("List replied \(reply)")
        }
        if options.json {
            printJSON(.object([("total", .uint(UInt64(total))), ("pieces", .array(pieces.map(JSONValue.dictionary)))]))
            return ClientExit.success
        }
        let first = Int(offset ?? 0)
        guard !pieces.isEmpty else {
            Terminal.line(total == 0 ? "no pieces" : "no pieces from \(first + 1) on (\(total) in all)")
            return ClientExit.success
        }
        let rows = pieces.map { piece -> [String] in
            let tempo = piece["Tempo"]?.doubleValue.map { ValueText.number($0) } ?? "-"
            let length = piece["LengthMicroseconds"]?.uint64Value.map { String(format: "%.2f s", Double($0) / 1_000_000) } ?? "-"
            return [piece["Id"]?.stringValue ?? "?", piece["Title"]?.stringValue ?? "", tempo, length,
                    piece["CreatedAt"]?.stringValue ?? ""]
        }
        TextTable.print(header: ["ID", "TITLE", "TEMPO", "LENGTH", "CREATED"], rows: rows)
        Terminal.line("pieces \(first + 1)–\(first + pieces.count) of \(total)")
        return ClientExit.success
    }
}
