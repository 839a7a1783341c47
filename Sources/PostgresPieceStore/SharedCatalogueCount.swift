import PieceStore
import PiecesCore
import PostgresNIO

/// `List`'s total. Counting a million-piece catalogue's matches one by one takes
/// milliseconds per ten thousand, so the commonest browse (a tempo range, perhaps a
/// tonality) is answered from `piece_tally`, a count of pieces per tonality, whole BPM,
/// visibility and author that the schema's triggers keep; only the partial buckets at the
/// range's ends are counted piece by piece. Any other filter counts the pieces.
enum SharedCatalogueCount {
    /// The total as a scalar SQL expression, its parameters added to `sql`'s.
    static func expression(_ query: PieceQuery, owner: String, titleWord: String? = nil,
                           binding sql: inout SharedCatalogueRows.Filter) -> String {
        // The tally rows `owner` may see: since schema version 6 a listed piece's row has an
        // empty owner and an unlisted one's its owner's, read from `piece_tally_owner`.
        func visible() -> String { "author_user IN ('', \(sql.bind(owner)))" }
        // No tempo bound (every piece, or a tonality): the whole tally.
        if tallied(query), query.tempoMin == nil, query.tempoMax == nil {
            var tally = [visible()]
            if let tonality = query.tonality { tally.append("tonality = \(sql.bind(tonality))") }
            return "(SELECT coalesce(sum(n), 0)::bigint FROM piece_tally WHERE \(tally.joined(separator: " AND ")))"
        }
        guard tallied(query), let buckets = TempoBuckets(minimum: query.tempoMin, maximum: query.tempoMax) else {
            let conditions = SharedCatalogueRows.conditions(query, owner: owner, titleWord: titleWord, binding: &sql)
            return "(SELECT count(*) FROM piece WHERE \(conditions.joined(separator: " AND ")))"
        }
        var parts: [String] = []
        if let whole = buckets.whole {
            var tally = [visible(), "tempo_bucket BETWEEN \(sql.bind(whole.lowerBound)) AND \(sql.bind(whole.upperBound))"]
            if let tonality = query.tonality { tally.append("tonality = \(sql.bind(tonality))") }
            parts.append("(SELECT coalesce(sum(n), 0) FROM piece_tally WHERE \(tally.joined(separator: " AND ")))::bigint")
        }
        for edge in buckets.edges {
            var conditions = SharedCatalogueRows.conditions(query, owner: owner, titleWord: titleWord, binding: &sql)
            if let from = edge.from { conditions.append("tempo >= \(sql.bind(from))") }
            if let below = edge.below { conditions.append("tempo < \(sql.bind(below))") }
            parts.append("(SELECT count(*) FROM piece WHERE \(conditions.joined(separator: " AND ")))")
        }
        return parts.isEmpty ? "0::bigint" : "(" + parts.joined(separator: " + ") + ")"
    }

    /// Whether the tally can answer `query`: it filters on nothing the tally does not keep.
    static func tallied(_ query: PieceQuery) -> Bool {
        query.titleContains == nil && query.timeSignatureUpper == nil && query.timeSignatureLower == nil && query.root == nil
            && query.basedOn == nil && query.author == nil && query.createdAfter == nil && query.createdBefore == nil
    }

    /// Since schema version 6 the tally's `author_user` is the owner of unlisted pieces
    /// only, and empty for listed ones (anyone sees those): a tally row for each tonality,
    /// bucket and owner of unlisted pieces, however many authors the listed ones have.
    static let ownersOfUnlistedOnly = [
        applyFunction(owner: unlistedOwner, replacing: true),
        "TRUNCATE piece_tally",
        "INSERT INTO piece_tally SELECT tonality, \(bucket), listed, \(unlistedOwner), count(*) FROM piece GROUP BY 1, 2, 3, 4",
    ]

    /// A piece's tally bucket: its whole BPM, or -1 (below every tempo's) without a tempo.
    static let bucket = "coalesce(floor(tempo)::integer, -1)"
    /// A piece's owner in the tally since schema version 6: empty for a listed piece.
    static let unlistedOwner = "CASE WHEN listed THEN '' ELSE author_user END"

    /// The function the tally's triggers run: the counts of the rows a statement removed
    /// taken away, those of the rows it added put in, each row counted under `owner`.
    static func applyFunction(owner: String, replacing: Bool) -> String {
        """
        CREATE \(replacing ? "OR REPLACE " : "")FUNCTION piece_tally_apply() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP IN ('DELETE', 'UPDATE') THEN
                UPDATE piece_tally t SET n = t.n - gone.n
                FROM (SELECT tonality, \(bucket) AS tempo_bucket, listed, \(owner) AS author_user, count(*) AS n
                      FROM removed GROUP BY 1, 2, 3, 4) gone
                WHERE t.tonality = gone.tonality AND t.tempo_bucket = gone.tempo_bucket
                  AND t.listed = gone.listed AND t.author_user = gone.author_user;
            END IF;
            IF TG_OP IN ('INSERT', 'UPDATE') THEN
                INSERT INTO piece_tally AS t
                SELECT tonality, \(bucket), listed, \(owner), count(*)
                FROM added GROUP BY 1, 2, 3, 4
                ON CONFLICT (tonality, tempo_bucket, listed, author_user) DO UPDATE SET n = t.n + excluded.n;
            END IF;
            RETURN NULL;
        END
        $$
        """
    }

    /// The tally, its first filling, and the triggers that keep it as pieces come and go
    /// (a statement's rows at once, from its transition table).
    static let schema = [
        """
        CREATE TABLE piece_tally (
            tonality text COLLATE "C" NOT NULL,
            tempo_bucket integer NOT NULL,
            listed boolean NOT NULL,
            author_user text COLLATE "C" NOT NULL,
            n bigint NOT NULL,
            PRIMARY KEY (tonality, tempo_bucket, listed, author_user)
        )
        """,
        applyFunction(owner: "author_user", replacing: false),
        "INSERT INTO piece_tally SELECT tonality, \(bucket), listed, author_user, count(*) FROM piece GROUP BY 1, 2, 3, 4",
        """
        CREATE TRIGGER piece_tally_insert AFTER INSERT ON piece REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION piece_tally_apply()
        """,
        """
        CREATE TRIGGER piece_tally_delete AFTER DELETE ON piece REFERENCING OLD TABLE AS removed
        FOR EACH STATEMENT EXECUTE FUNCTION piece_tally_apply()
        """,
        """
        CREATE TRIGGER piece_tally_update AFTER UPDATE ON piece REFERENCING OLD TABLE AS removed NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION piece_tally_apply()
        """,
    ]
}
