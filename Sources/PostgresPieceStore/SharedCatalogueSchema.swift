import Logging
import PostgresNIO

/// The shared catalogue's schema, in numbered migrations. The catalogue's administrator
/// applies what is missing (`upgrade-catalogue`, `add-host`), in one transaction under an
/// advisory lock, so that two at once wait for each other and every migration runs once;
/// hosts, which own nothing of it, only check that it is the version they know.
enum SharedCatalogueSchema {
    /// Any number, the same on every host: the lock migrations are applied under.
    static let migrationLock: Int64 = 0x6561_7273_686f_7431  // "earshot1"

    static let migrations: [(version: Int, statements: [String])] = [
        (1, [
            // Text compared byte by byte (COLLATE "C"), as the private store does, whatever
            // the database's locale: ids, titles and times sort the same on every host.
            """
            CREATE TABLE piece (
                id text COLLATE "C" PRIMARY KEY,
                title text COLLATE "C" NOT NULL,
                description text NOT NULL,
                length_us bigint NOT NULL,
                tempo double precision,
                loop_start_us bigint,
                loop_end_us bigint,
                ts_upper smallint,
                ts_lower smallint,
                tonality text COLLATE "C" NOT NULL,
                scale_mask integer NOT NULL,
                root smallint,
                listed boolean NOT NULL,
                attachment_mime text,
                author text COLLATE "C" NOT NULL,
                author_user text COLLATE "C" NOT NULL,
                author_uid bigint NOT NULL,
                created_at text COLLATE "C" NOT NULL,
                sample_rate bigint NOT NULL,
                channels bigint NOT NULL,
                loudness_lufs double precision NOT NULL,
                true_peak_dbtp double precision NOT NULL
            )
            """,
            // Asset bytes, content-addressed, in chunks of at most 1 MiB stored uncompressed
            // (audio does not compress, and a chunk is read whole).
            "CREATE TABLE object (hash text COLLATE \"C\" PRIMARY KEY, size bigint NOT NULL)",
            """
            CREATE TABLE object_chunk (
                hash text COLLATE "C" NOT NULL REFERENCES object (hash) ON DELETE CASCADE,
                seq integer NOT NULL,
                data bytea NOT NULL,
                PRIMARY KEY (hash, seq)
            )
            """,
            "ALTER TABLE object_chunk ALTER COLUMN data SET STORAGE EXTERNAL",
            """
            CREATE TABLE asset (
                piece_id text COLLATE "C" NOT NULL REFERENCES piece (id) ON DELETE CASCADE,
                kind text NOT NULL,
                format text NOT NULL,
                hash text COLLATE "C" NOT NULL REFERENCES object (hash),
                size bigint NOT NULL,
                dropped boolean NOT NULL,
                PRIMARY KEY (piece_id, kind, format)
            )
            """,
            """
            CREATE TABLE based_on (
                piece_id text COLLATE "C" NOT NULL REFERENCES piece (id) ON DELETE CASCADE,
                parent_id text COLLATE "C" NOT NULL,
                position integer NOT NULL,
                PRIMARY KEY (piece_id, parent_id)
            )
            """,
            // The piece count, kept in the transactions that add and delete pieces.
            "CREATE TABLE piece_count (only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), n bigint NOT NULL)",
            "INSERT INTO piece_count (n) VALUES (0)",
            "CREATE INDEX asset_hash ON asset (hash)",
            "CREATE INDEX based_on_parent ON based_on (parent_id)",
            "CREATE INDEX piece_created ON piece (created_at, id)",
            "CREATE INDEX piece_title ON piece (title, id)",
            "CREATE INDEX piece_tempo ON piece (tempo, id)",
            "CREATE INDEX piece_length ON piece (length_us, id)",
            "CREATE INDEX piece_author ON piece (author)",
            "CREATE INDEX piece_time_signature ON piece (ts_upper, ts_lower)",
            "CREATE INDEX piece_tonality_root ON piece (tonality, root)",
            // The commonest List (a tonality, a tempo range, by creation) from one index.
            "CREATE INDEX piece_list_tonality_tempo ON piece (tonality, tempo) INCLUDE (listed, author_user, created_at, id)",
        ]),
        (2, [
            // Pieces without a tempo first going up and last going down, as List orders them,
            // so that sorting by tempo reads the index either way.
            "DROP INDEX piece_tempo",
            "CREATE INDEX piece_tempo ON piece (tempo NULLS FIRST, id)",
        ] + SharedCatalogueCount.schema),
        (3, [
            // The catalogue's own identity, by which a private store records what was copied
            // into it (whatever the server's address is called on each host).
            """
            CREATE TABLE catalogue_identity (
                only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
                id uuid NOT NULL DEFAULT gen_random_uuid()
            )
            """,
            "INSERT INTO catalogue_identity DEFAULT VALUES",
        ]),
        (4, [
            // Every drop and deletion, numbered in the order they commit, so that a host
            // cut off for a while announces what it missed once it is back.
            """
            CREATE TABLE piece_change (
                seq bigserial PRIMARY KEY,
                kind text NOT NULL CHECK (kind IN ('d', 'x')),
                piece_id text COLLATE "C" NOT NULL,
                instance text NOT NULL,
                at timestamptz NOT NULL DEFAULT now()
            )
            """,
            "CREATE INDEX piece_change_at ON piece_change (at)",
        ]),
        (5, [
            // A piece is its author's on the host it was dropped on: what decides whether an
            // unlisted piece is shown is the whole `user@host`, kept in author_user (the
            // tally's triggers follow the update).
            "UPDATE piece SET author_user = author WHERE author_user <> author",
        ]),
        (6, [
            // Title searches (ILIKE '%text%') from a trigram index, not a scan of every piece.
            "CREATE EXTENSION IF NOT EXISTS pg_trgm",
            "CREATE INDEX piece_title_trigram ON piece USING gin (title gin_trgm_ops)",
            // An author's pieces newest first from the index.
            "DROP INDEX piece_author",
            "CREATE INDEX piece_author ON piece (author, created_at, id)",
        ] + SharedCatalogueCount.ownersOfUnlistedOnly),
        (7, [
            // A List's total counted from the indexes alone: who may see a piece is in the
            // indexes an author's pieces and a time range are read from, and the tally's
            // rows a viewer may see (the listed ones' and their own) are found by owner.
            "DROP INDEX piece_author",
            "CREATE INDEX piece_author ON piece (author, created_at, id) INCLUDE (listed, author_user)",
            "DROP INDEX piece_created",
            "CREATE INDEX piece_created ON piece (created_at, id) INCLUDE (listed, author_user)",
            "CREATE INDEX piece_tally_owner ON piece_tally (author_user, tonality, tempo_bucket) INCLUDE (n)",
        ]),
        // Each host a role of its own, and the database deciding what it may see and do.
        (8, SharedCatalogueAccess.schema),
    ]

    static var latest: Int { migrations.last?.version ?? 0 }

    /// Applies the migrations `connection`'s database lacks; returns the versions applied.
    static func migrate(_ connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        // Every statement's rows are read to their end: PostgresNIO hands over a statement
        // that returns rows once their description comes, before it has run, and an error
        // it meets then (a lock not had, a deadlock) is told only to whoever reads them.
        // Unread, it would surface as the next statement's "transaction is aborted".
        func execute(_ query: PostgresQuery) async throws {
            for try await _ in try await connection.query(query, logger: logger) {}
        }
        try await execute("BEGIN")
        do {
            try await execute("SELECT pg_advisory_xact_lock(\(migrationLock))")
            // A migration over a large catalogue (a table's first filling) may take a while.
            try await execute("SET LOCAL statement_timeout = 0")
            try await execute("""
                CREATE TABLE IF NOT EXISTS earshot_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())
                """)
            var current = 0
            for version in try await connection.values("SELECT coalesce(max(version), 0) FROM earshot_schema", Int.self, logger) {
                current = version
            }
            guard current <= latest else {
                throw SchemaTooNew(found: current, known: latest)
            }
            var applied: [Int] = []
            for migration in migrations where migration.version > current {
                for statement in migration.statements {
                    try await execute(PostgresQuery(unsafeSQL: statement))
                }
                try await execute("INSERT INTO earshot_schema (version) VALUES (\(migration.version))")
                applied.append(migration.version)
            }
            try await execute("COMMIT")
            return applied
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }

    /// The schema's version as a host finds it, which may not migrate it: the catalogue's
    /// owner does (`earshot-pieces upgrade-catalogue`, `add-host`). Throws unless it is
    /// the version this host knows.
    static func check(_ connection: PostgresConnection, logger: Logger) async throws {
        let exists = try await connection.values("SELECT to_regclass('earshot_schema') IS NOT NULL", Bool.self, logger).first ?? false
        var current = 0
        if exists {
            current = try await connection.values("SELECT coalesce(max(version), 0) FROM earshot_schema", Int.self, logger).first ?? 0
        }
        guard current <= latest else { throw SchemaTooNew(found: current, known: latest) }
        guard current == latest else { throw SchemaTooOld(found: current, known: latest) }
    }

    /// The database's schema is older than this host's (or absent): its owner migrates it.
    struct SchemaTooOld: Error, CustomStringConvertible {
        let found: Int
        let known: Int
        var description: String {
            (found == 0 ? "the catalogue has no schema yet" : "the catalogue's schema is version \(found), older than this earshot-pieces needs (\(known))")
                + ": its administrator runs `earshot-pieces upgrade-catalogue --database ADMIN_URL` (add-host does it too)"
        }
    }

    /// The database was migrated by a newer Earshot.
    struct SchemaTooNew: Error, CustomStringConvertible {
        let found: Int
        let known: Int
        var description: String {
            "the catalogue's schema is version \(found), newer than this earshot-pieces knows (\(known)): upgrade this host"
        }
    }
}
