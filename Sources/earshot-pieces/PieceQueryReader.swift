import ContractCore
import EarshotDBus
import EarshotService
import PiecesCore

/// Reading a `List` request.
enum PieceQueryReader {
    static func read(_ call: MethodCall) throws(DBusError) -> PieceQuery {
        var options = try call.options(0)
        var query = PieceQuery()
        query.titleContains = try options.get("TitleContains", .string(maxLength: 200))
        query.tempoMin = try options.get("TempoMin", .double())
        query.tempoMax = try options.get("TempoMax", .double())
        query.timeSignatureUpper = try options.get("TimeSignatureUpper", .uint8())
        query.timeSignatureLower = try options.get("TimeSignatureLower", .uint8())
        query.tonality = try options.get("Tonality", .oneOf(Tonality.names))
        query.root = try options.get("Root", .uint8(0...11))
        query.basedOn = try options.get("BasedOn", .string)
        query.author = try options.get("Author", .string)
        query.createdAfter = try timestamp(&options, "CreatedAfter")
        query.createdBefore = try timestamp(&options, "CreatedBefore")
        if let sort = try options.get("SortBy", .oneOf(PieceQuery.SortKey.allCases.map(\.rawValue))) {
            query.sortBy = PieceQuery.SortKey(rawValue: sort) ?? .created
        }
        query.descending = try options.get("Descending", .bool) ?? false
        query.offset = try options.get("Offset", .uint32()) ?? 0
        query.limit = try options.get("Limit", .uint32(1...PieceQuery.maxLimit)) ?? PieceQuery.defaultLimit
        try options.finish()
        try DBusError.readingRequest { try query.validate() }
        return query
    }

    private static func timestamp(_ options: inout OptionReader, _ key: String) throws(DBusError) -> String? {
        guard let text = try options.get(key, .string) else { return nil }
        guard let normalized = PieceValues.normalized(text) else {
            throw options.invalid(key, "'\(text)' is not an RFC 3339 time (e.g. 2026-11-22T05:00:00Z)")
        }
        return normalized
    }
}
