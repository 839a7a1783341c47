import ContractCore
import EarshotContract
import EarshotDBus
import EarshotService
import PiecesCore

/// A `List` query read against the contract's keys (types, ranges, allowed values and
/// defaults come from there), then its times and the query's own rules.
enum PieceQueryReader {
    typealias Keys = PiecesContract.Manager.QueryKeys

    static func read(_ call: MethodCall) throws(DBusError) -> PieceQuery {
        let options = try call.request(PiecesContract.Manager.list)
        var query = PieceQuery()
        query.titleContains = try options.get(Keys.titleContains)
        query.tempoMin = try options.get(Keys.tempoMin)
        query.tempoMax = try options.get(Keys.tempoMax)
        query.timeSignatureUpper = try options.get(Keys.timeSignatureUpper)
        query.timeSignatureLower = try options.get(Keys.timeSignatureLower)
        query.tonality = try options.get(Keys.tonality)
        query.root = try options.get(Keys.root)
        query.basedOn = try options.get(Keys.basedOn)
        query.author = try options.get(Keys.author)
        query.createdAfter = try timestamp(options, Keys.createdAfter)
        query.createdBefore = try timestamp(options, Keys.createdBefore)
        query.sortBy = try options.word(Keys.sortBy) ?? .created
        query.descending = try options.require(Keys.descending)
        query.offset = try options.require(Keys.offset)
        query.limit = try options.require(Keys.limit)
        try DBusError.readingRequest { try query.validate() }
        return query
    }

    private static func timestamp(_ options: DeclaredRequest, _ key: OptionKey) throws(DBusError) -> String? {
        guard let text: String = try options.get(key) else { return nil }
        guard let normalized = PieceValues.normalized(text) else {
            throw options.invalid(key, "'\(text)' is not an RFC 3339 time (e.g. 2026-11-22T05:00:00Z)")
        }
        return normalized
    }
}
