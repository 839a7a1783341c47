/// Who may do what in the shared catalogue, enforced by the database (schema version 8).
///
/// Each host logs in as a role of its own, a member of `earshot_host` (`add-host`); its
/// identity is that role (`current_user`), proven by its password or certificate. A piece
/// belongs to the host its author's `user@host` names (`piece.host`), and row-level
/// security decides, whatever SQL a host sends:
/// - a host sees the listed pieces and its own unlisted ones, with their assets, lineage,
///   bytes, tallies and changes, and nothing of another host's unlisted pieces;
/// - it adds pieces, assets and lineage of its own only (a transcode of any piece it sees);
/// - it deletes its own pieces only, or any with `earshot_fleet_admin` granted;
/// - it changes no row in place, and writes no count and no change log: those are kept by
///   the owner's triggers (`SECURITY DEFINER`), as is the removal of unnamed objects.
/// The catalogue's owner (the administrator who migrated it) is not bound by these rules;
/// a host that logs in as the owner, a superuser or a role that bypasses them is refused.
///
/// Nothing on a drop's way is shared by every host: no fleet-wide lock (the change log is
/// ordered by transaction, see `SharedCatalogueFollowing`) and no single counter row (the
/// tally is kept per host).
enum SharedCatalogueAccess {
    /// Hosts' roles are members of this one.
    static let hostRole = "earshot_host"
    /// A host whose role is a member of this one may delete any piece.
    static let fleetAdministratorRole = "earshot_fleet_admin"

    /// The settings every host's session gets (`ALTER ROLE … SET`, and at each connection):
    /// a transaction left open by a host that went silent is ended by the server, a lock
    /// waited for is given up, and the server's end of the connection is kept alive.
    static let sessionSettings: [(String, String)] = [
        ("idle_in_transaction_session_timeout", "5s"),
        ("lock_timeout", "4s"),
        ("statement_timeout", "15s"),
        ("tcp_keepalives_idle", "4"),
        ("tcp_keepalives_interval", "1"),
        ("tcp_keepalives_count", "3"),
    ]

    /// A piece's owner host: the part of its author after the `@`.
    static let pieceHost = "split_part(author, '@', 2)"

    /// Whether the current role may see every piece (a fleet administrator): a subquery,
    /// so that it is asked once a statement, not once a row.
    static let isFleetAdministrator = "(SELECT pg_has_role('\(fleetAdministratorRole)', 'MEMBER'))"

    static let schema: [String] = [
        // The roles are the server's, shared by its databases: made once.
        """
        DO $$ BEGIN
            BEGIN
                CREATE ROLE \(hostRole) NOLOGIN;
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;  -- made already (by another database's migration)
            END;
            BEGIN
                CREATE ROLE \(fleetAdministratorRole) NOLOGIN;
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
            END;
            EXECUTE format('GRANT CONNECT ON DATABASE %I TO \(hostRole)', current_database());
        END $$
        """,
        // The piece's host, as its author names it; in the indexes `List` reads alone, beside
        // what the service itself filters on, so that the rows' policy needs no heap visit.
        "ALTER TABLE piece ADD COLUMN host text COLLATE \"C\" GENERATED ALWAYS AS (\(pieceHost)) STORED",
        "DROP INDEX piece_author",
        "CREATE INDEX piece_author ON piece (author, created_at, id) INCLUDE (listed, author_user, host)",
        "DROP INDEX piece_created",
        "CREATE INDEX piece_created ON piece (created_at, id) INCLUDE (listed, author_user, host)",
        "DROP INDEX piece_list_tonality_tempo",
        "CREATE INDEX piece_list_tonality_tempo ON piece (tonality, tempo) INCLUDE (listed, author_user, host, created_at, id)",
        // The count of every piece, one row every drop and deletion waited for: gone (Count
        // is the tally's sum of what the host sees).
        "DROP TABLE piece_count",
        // The tally per host as well: hosts' drops never update the same row.
        "DROP TRIGGER piece_tally_insert ON piece",
        "DROP TRIGGER piece_tally_delete ON piece",
        "DROP TRIGGER piece_tally_update ON piece",
        "DROP TABLE piece_tally",
        """
        CREATE TABLE piece_tally (
            tonality text COLLATE "C" NOT NULL,
            tempo_bucket integer NOT NULL,
            listed boolean NOT NULL,
            author_user text COLLATE "C" NOT NULL,
            host text COLLATE "C" NOT NULL,
            n bigint NOT NULL,
            PRIMARY KEY (tonality, tempo_bucket, listed, author_user, host)
        )
        """,
        "CREATE INDEX piece_tally_owner ON piece_tally (author_user, tonality, tempo_bucket) INCLUDE (n, host)",
        tallyFunction,
        """
        INSERT INTO piece_tally
        SELECT tonality, \(SharedCatalogueCount.bucket), listed, \(SharedCatalogueCount.unlistedOwner), host, count(*)
        FROM piece GROUP BY 1, 2, 3, 4, 5
        """,
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
        // The change log: ordered by the transaction that made a change (no lock), told to
        // every host or, for an unlisted piece, to its own host only; written by a trigger
        // of the owner's, so that no host writes or forges it.
        "ALTER TABLE piece_change ADD COLUMN tx xid8 NOT NULL DEFAULT pg_current_xact_id()",
        "ALTER TABLE piece_change ADD COLUMN told_to text COLLATE \"C\"",
        "CREATE INDEX piece_change_tx ON piece_change (tx, seq)",
        // The newest change the log no longer keeps: a host whose place is before it missed some.
        """
        CREATE TABLE piece_change_horizon (
            only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
            tx xid8 NOT NULL,
            seq bigint NOT NULL
        )
        """,
        "INSERT INTO piece_change_horizon (tx, seq) VALUES ('0'::xid8, 0)",
        changeFunction,
        """
        CREATE TRIGGER piece_change_insert AFTER INSERT ON piece REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION piece_change_record()
        """,
        """
        CREATE TRIGGER piece_change_delete AFTER DELETE ON piece REFERENCING OLD TABLE AS removed
        FOR EACH STATEMENT EXECUTE FUNCTION piece_change_record()
        """,
        trimFunction,
        orphansFunction,
        titleFunction,
        // What a host may do at all.
        "GRANT USAGE ON SCHEMA public TO \(hostRole)",
        "GRANT SELECT, INSERT, DELETE ON piece TO \(hostRole)",
        // UPDATE only for SELECT … FOR SHARE, which needs it: the policies allow no change.
        "GRANT UPDATE (listed) ON piece TO \(hostRole)",
        "GRANT SELECT, INSERT ON asset, based_on, object_chunk TO \(hostRole)",
        "GRANT SELECT, INSERT ON object TO \(hostRole)",
        "GRANT UPDATE (size) ON object TO \(hostRole)",
        "GRANT SELECT ON piece_tally, piece_change, piece_change_horizon, catalogue_identity, earshot_schema TO \(hostRole)",
        "GRANT EXECUTE ON FUNCTION piece_change_trim(interval), object_remove_unnamed(text[]), piece_titled(text) TO \(hostRole)",
        // What a host may see and write, row by row.
        "ALTER TABLE piece ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY piece_seen ON piece FOR SELECT TO \(hostRole) USING (listed OR host = current_user OR \(isFleetAdministrator))",
        "CREATE POLICY piece_added ON piece FOR INSERT TO \(hostRole) WITH CHECK (host = current_user)",
        "CREATE POLICY piece_deleted ON piece FOR DELETE TO \(hostRole) USING (host = current_user OR \(isFleetAdministrator))",
        "CREATE POLICY piece_held ON piece FOR UPDATE TO \(hostRole) USING (true) WITH CHECK (false)",
        "ALTER TABLE asset ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY asset_seen ON asset FOR SELECT TO \(hostRole) USING (EXISTS (SELECT 1 FROM piece p WHERE p.id = asset.piece_id))",
        // Dropped assets with the host's own piece; transcodes of any piece it sees.
        """
        CREATE POLICY asset_added ON asset FOR INSERT TO \(hostRole) WITH CHECK (
            EXISTS (SELECT 1 FROM piece p WHERE p.id = asset.piece_id AND (p.host = current_user OR NOT asset.dropped)))
        """,
        "ALTER TABLE based_on ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY based_on_seen ON based_on FOR SELECT TO \(hostRole) USING (EXISTS (SELECT 1 FROM piece p WHERE p.id = based_on.piece_id))",
        """
        CREATE POLICY based_on_added ON based_on FOR INSERT TO \(hostRole) WITH CHECK (
            EXISTS (SELECT 1 FROM piece p WHERE p.id = based_on.piece_id AND p.host = current_user))
        """,
        // An object's bytes to those who see an asset naming it; written only into an
        // object made in the same transaction (nobody adds to another's bytes).
        "ALTER TABLE object ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY object_seen ON object FOR SELECT TO \(hostRole) USING (true)",
        "CREATE POLICY object_added ON object FOR INSERT TO \(hostRole) WITH CHECK (true)",
        "CREATE POLICY object_held ON object FOR UPDATE TO \(hostRole) USING (true) WITH CHECK (false)",
        "ALTER TABLE object_chunk ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY object_chunk_seen ON object_chunk FOR SELECT TO \(hostRole) USING (EXISTS (SELECT 1 FROM asset a WHERE a.hash = object_chunk.hash))",
        """
        CREATE POLICY object_chunk_added ON object_chunk FOR INSERT TO \(hostRole) WITH CHECK (
            EXISTS (SELECT 1 FROM object o WHERE o.hash = object_chunk.hash AND o.xmin = pg_current_xact_id()::xid))
        """,
        "ALTER TABLE piece_tally ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY piece_tally_seen ON piece_tally FOR SELECT TO \(hostRole) USING (author_user = '' OR host = current_user OR \(isFleetAdministrator))",
        "ALTER TABLE piece_change ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY piece_change_seen ON piece_change FOR SELECT TO \(hostRole) USING (told_to IS NULL OR told_to = current_user)",
        "ALTER TABLE piece_change_horizon ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY piece_change_horizon_seen ON piece_change_horizon FOR SELECT TO \(hostRole) USING (true)",
    ]

    /// The tally's trigger function, as the owner: the counts of the rows a statement
    /// removed taken away, those of the rows it added put in, per host.
    static let tallyFunction = """
        CREATE OR REPLACE FUNCTION piece_tally_apply() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
        BEGIN
            IF TG_OP IN ('DELETE', 'UPDATE') THEN
                UPDATE piece_tally t SET n = t.n - gone.n
                FROM (SELECT tonality, \(SharedCatalogueCount.bucket) AS tempo_bucket, listed,
                             \(SharedCatalogueCount.unlistedOwner) AS author_user, host, count(*) AS n
                      FROM removed GROUP BY 1, 2, 3, 4, 5) gone
                WHERE t.tonality = gone.tonality AND t.tempo_bucket = gone.tempo_bucket AND t.listed = gone.listed
                  AND t.author_user = gone.author_user AND t.host = gone.host;
            END IF;
            IF TG_OP IN ('INSERT', 'UPDATE') THEN
                INSERT INTO piece_tally AS t
                SELECT tonality, \(SharedCatalogueCount.bucket), listed, \(SharedCatalogueCount.unlistedOwner), host, count(*)
                FROM added GROUP BY 1, 2, 3, 4, 5
                ON CONFLICT (tonality, tempo_bucket, listed, author_user, host) DO UPDATE SET n = t.n + excluded.n;
            END IF;
            RETURN NULL;
        END
        $$
        """

    /// The change log's trigger function, as the owner: a row per piece a statement added
    /// (`d`) or removed (`x`), with the instance the session names (`earshot.instance`), told
    /// to every host for a listed piece and to its own host for an unlisted one; and a
    /// notification (delivered at the commit) that there is news.
    static let changeFunction = """
        CREATE FUNCTION piece_change_record() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                INSERT INTO piece_change (kind, piece_id, instance, told_to)
                SELECT 'd', id, coalesce(current_setting('earshot.instance', true), ''), CASE WHEN listed THEN NULL ELSE host END
                FROM added;
            ELSE
                INSERT INTO piece_change (kind, piece_id, instance, told_to)
                SELECT 'x', id, coalesce(current_setting('earshot.instance', true), ''), CASE WHEN listed THEN NULL ELSE host END
                FROM removed;
            END IF;
            PERFORM pg_notify('earshot_pieces', '');
            RETURN NULL;
        END
        $$
        """

    /// Forgets changes older than `kept`, moving the horizon to the newest one forgotten.
    static let trimFunction = """
        CREATE FUNCTION piece_change_trim(kept interval) RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
        DECLARE
            newest record;
        BEGIN
            WITH gone AS (DELETE FROM piece_change WHERE at < now() - kept RETURNING tx, seq)
            SELECT tx, seq INTO newest FROM gone ORDER BY tx DESC, seq DESC LIMIT 1;
            IF FOUND THEN
                UPDATE piece_change_horizon SET tx = newest.tx, seq = newest.seq WHERE (tx, seq) < (newest.tx, newest.seq);
            END IF;
        END
        $$
        """

    /// The pieces whose title matches `pattern` (ILIKE) that the calling host may see, found
    /// through the title index. Under the policies a host's own `title ILIKE …` is checked
    /// only after them, row by row (ILIKE is no leakproof operator), so the index would go
    /// unused: 440 ms for a search of a million pieces instead of 0.7. The function reads
    /// as the owner and applies the same visibility for the host that called
    /// (`session_user`); `List` asks for its ids, which the policies then check again.
    static let titleFunction = """
        CREATE FUNCTION piece_titled(pattern text) RETURNS SETOF text LANGUAGE sql STABLE SECURITY DEFINER
        SET search_path = public ROWS 100 AS $$
            SELECT id FROM piece
            WHERE title ILIKE pattern ESCAPE '\\'
              AND (listed OR host = session_user OR pg_has_role(session_user, '\(fleetAdministratorRole)', 'MEMBER'))
        $$
        """

    /// Removes those of the objects `hashes` that no asset names any more (whoever's pieces
    /// the assets are: the caller may not see them all); returns their hashes.
    static let orphansFunction = """
        CREATE FUNCTION object_remove_unnamed(hashes text[]) RETURNS SETOF text LANGUAGE sql SECURITY DEFINER SET search_path = public AS $$
            DELETE FROM object o WHERE o.hash = ANY(hashes) AND NOT EXISTS (SELECT 1 FROM asset a WHERE a.hash = o.hash)
            RETURNING o.hash
        $$
        """
}
