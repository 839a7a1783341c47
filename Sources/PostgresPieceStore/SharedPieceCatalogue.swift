import ContractCore
import EarshotMedia
import EarshotSync
import Foundation
import Glibc
import Logging
import PieceStore
import PiecesCore
import PostgresNIO

/// The shared catalogue: metadata, lineage and asset bytes in a PostgreSQL database that
/// many hosts use. Each host stages incoming bytes under its data directory (where they
/// are hashed and measured) and keeps a cache of objects it has read, each verified
/// against its hash when it is fetched. Drops and deletions are announced to the other
/// hosts with `NOTIFY`; while the server cannot be reached, calls fail at once with
/// `StorageUnavailable`, and the catalogue reconnects by itself.
public final class SharedPieceCatalogue: PieceCatalogue {
    public let files: ObjectStore
    /// The objects this host keeps, bounded (`--cache-size`).
    let cache: SharedObjectCache
    public let configuration: SharedCatalogueConfiguration
    let logger: Logger
    let pool: PostgresConnections
    /// This process among the catalogue's users: its own changes are not news to it.
    let instance: String
    /// Why the server is unreachable, while it is.
    let unreachable = Locked<String?>(nil)
    let listener = Locked<Task<Void, Never>?>(nil)
    public let events: AsyncStream<CatalogueEvent>
    let announce: AsyncStream<CatalogueEvent>.Continuation

    static let channel = "earshot_pieces"
    /// How long the change log keeps a change: a host away for longer is told it missed
    /// some (`CatalogueEvent.changesMissed`).
    static let changeLogKept = "30 days"
    /// Where this host is in the change log (see `SharedCatalogueFollowing`).
    let changes = Locked(ChangeCursor())
    /// The catalogue's title trigrams as last sampled, for title searches.
    let titleSample = Locked<TitleSample>(TitleSample())
    /// Bytes per stored chunk of an object.
    static let chunkSize = 1 << 20

    /// This host's data directory, which may also hold a private store (never touched).
    public let dataDirectory: URL

    /// A catalogue whose files on this host (staging and the cache of objects) live in
    /// `shared-cache/` under `directory`.
    public init(configuration: SharedCatalogueConfiguration, directory: URL, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        dataDirectory = directory
        files = try ObjectStore(directory: SharedCacheDirectory.prepare(in: directory))
        cache = SharedObjectCache(files: files, limit: configuration.cacheBytes, logger: logger)
        // The pool's statements stop waiting as soon as the heartbeat finds the path lost.
        let unreachable = self.unreachable
        let instance = UUID().uuidString.lowercased()
        self.instance = instance
        pool = try PostgresConnections(configuration, limit: 8, logger: logger, instance: instance) { unreachable.withLock { $0 } != nil }
        (events, announce) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    public var location: String { configuration.description }

    public func author(of userName: String) -> String { "\(userName)@\(configuration.hostName)" }

    /// A piece belongs to `user@host`: its author may delete it from the host it was dropped
    /// on; root and the service's own user may delete the pieces dropped on their host; a
    /// fleet administrator (`fleetAdministrators`, user names of this host) any piece. The
    /// database holds the host to the same (its own pieces only, unless its role is a fleet
    /// administrator's): this is who on the host may ask.
    public func mayDelete(_ piece: StoredPiece, by viewer: Viewer) -> Bool {
        if piece.author == author(of: viewer.userName) { return true }
        if viewer.uid == 0 || viewer.uid == getuid() { return Self.host(of: piece.author) == configuration.hostName }
        return configuration.fleetAdministrators.contains(viewer.userName)
    }

    /// A listed piece, an unlisted one of the viewer's, or (for root, the service's user and
    /// the host's fleet administrators) one of this host's; the database shows this host no
    /// other host's unlisted pieces in the first place.
    public func mayView(_ piece: StoredPiece, by viewer: Viewer) -> Bool {
        if piece.draft.listed || piece.author == author(of: viewer.userName) { return true }
        let ownHost = Self.host(of: piece.author) == configuration.hostName
        return (ownHost && (viewer.uid == 0 || viewer.uid == getuid())) || configuration.fleetAdministrators.contains(viewer.userName)
    }

    static func user(of author: String) -> String {
        author.split(separator: "@", maxSplits: 1).first.map(String.init) ?? author
    }

    static func host(of author: String) -> String {
        author.split(separator: "@", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
    }

    // MARK: Opening and following

    /// Prepares the schema, refuses a data directory whose private store has pieces the
    /// catalogue lacks (`PrivateStoreNotCopied`), sweeps this host's cache and listens.
    public func open() async throws -> (staged: Int, objects: Int) {
        let identity = try await prepare()
        if let ids = try PieceStore.pieceIDs(ofStoreIn: dataDirectory) {
            let copied = PrivateStoreCopies(storeDirectory: dataDirectory).copied(to: identity)
            let uncopied = try await missing(ids.filter { !copied.contains($0) })
            guard uncopied.isEmpty else {
                throw PrivateStoreNotCopied(directory: dataDirectory.path, missing: uncopied.count, location: location)
            }
            logger.info("the private store in \(dataDirectory.path) (\(ids.count) piece(s)) is in the catalogue; it is left as it is")
        }
        // Changes older than the log keeps are forgotten; those from now on are announced.
        try await transaction { connection in
            try await connection.run("SELECT piece_change_trim(\(Self.changeLogKept)::interval)", self.logger)
        }
        let start = try await presentEnd()
        changes.withLock { $0 = start }
        // Staged files are this host's own; cached objects stay while some piece names them.
        let referenced = try await transaction { connection in
            try await Set(connection.values("SELECT hash FROM object", String.self, self.logger))
        }
        let swept = files.sweep(keeping: referenced)
        cache.measure()
        try await startListening()
        return swept
    }

    /// Checks that the database's schema is the one this host knows and that this host
    /// logs in as a host's role (`SharedCatalogueHosts.checkRole`); returns the catalogue's
    /// identity.
    public func prepare() async throws -> String {
        do {
            let connection = try await pool.lease()
            do {
                try await SharedCatalogueSchema.check(connection, logger: logger)
                try await SharedCatalogueHosts.checkRole(connection, logger: logger)
                await pool.release(connection, reusable: true)
            } catch {
                await pool.release(connection, reusable: !connection.isClosed)
                throw error
            }
        } catch {
            throw report(error)
        }
        logger.info("this host is \(configuration.hostName) in the catalogue at \(location)")
        return try await transaction(readOnly: true) { connection in
            try await connection.values("SELECT id::text FROM catalogue_identity", String.self, self.logger).first ?? ""
        }
    }

    /// Nothing: its connections are few and reconnecting after every quiet spell would
    /// only slow the next call.
    public func releaseMemory() async {}

    public func close() async {
        listener.withLock { $0?.cancel() }
        announce.finish()
        await pool.close()
    }

    // MARK: Transactions

    /// Runs `body` in a transaction on a pooled connection, again when another host's
    /// transaction conflicted with it (at most four times in all); database errors as the
    /// service reports them. A `readOnly` one reads a single snapshot (repeatable read), so
    /// that its several queries agree with each other.
    ///
    /// A `singleStatement` body runs one statement, which reads one snapshot by itself: it
    /// is sent without `BEGIN` and `COMMIT`, a round trip instead of three.
    func transaction<Value: Sendable>(readOnly: Bool = false, singleStatement: Bool = false,
                                      _ body: (PostgresConnection) async throws -> Value) async throws -> Value {
        var attempt = 0
        while true {
            attempt += 1
            if let reason = unreachable.withLock({ $0 }) {
                throw StorageUnavailable("the shared catalogue at \(location) is unreachable: \(reason)")
            }
            let connection: PostgresConnection
            do {
                connection = try await pool.lease()
            } catch {
                throw report(error)
            }
            do {
                if !singleStatement {
                    try await connection.rows(readOnly ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN", logger)
                }
                let value = try await body(connection)
                if !singleStatement { try await connection.rows("COMMIT", logger) }
                await pool.release(connection, reusable: true)
                return value
            } catch {
                let failure = PostgresFailure(error)
                // A server that does not answer at all: the path is gone; calls fail at once
                // until the listener reaches it again.
                if let timeout = error as? StatementTimedOut { markUnreachable(timeout.description) }
                if failure.connectionReusable, !connection.isClosed, !singleStatement {
                    _ = try? await connection.rows("ROLLBACK", logger)
                }
                await pool.release(connection, reusable: failure.connectionReusable)
                if case .conflict = failure, attempt < 4 { continue }
                throw failure.reported(error, location: location)
            }
        }
    }

    /// An error met outside a transaction (connecting, migrating) as the service reports it.
    func report(_ error: any Error) -> any Error {
        if error is StorageUnavailable { return error }
        guard error is PSQLError else {
            return StorageUnavailable("the shared catalogue at \(location) is unreachable: \(PostgresFailure.plainly("\(error)"))")
        }
        return PostgresFailure(error).reported(error, location: location)
    }

    // MARK: Counting and reading

    /// How many pieces this host sees: the tally's rows it may read (every listed piece and
    /// its own unlisted ones), summed.
    public func count() async throws -> Int {
        try await transaction(readOnly: true, singleStatement: true) { connection in
            try await connection.values("SELECT coalesce(sum(n), 0)::bigint FROM piece_tally", Int.self, self.logger).first ?? 0
        }
    }

    public func missing(_ ids: [String]) async throws -> [String] {
        guard !ids.isEmpty else { return [] }
        return try await transaction { connection in try await self.missing(ids, connection) }
    }

    func missing(_ ids: [String], _ connection: PostgresConnection) async throws -> [String] {
        let found = try await Set(connection.values("SELECT id FROM piece WHERE id = ANY(\(ids))", String.self, logger))
        return ids.filter { !found.contains($0) }
    }

    public func piece(_ id: String) async throws -> StoredPiece? {
        try await transaction(readOnly: true) { connection in try await self.pieces([id], connection).first }
    }

    /// The pieces with `ids`, in that order, in three queries.
    func pieces(_ ids: [String], _ connection: PostgresConnection) async throws -> [StoredPiece] {
        guard !ids.isEmpty else { return [] }
        var parents: [String: [String]] = [:]
        for (piece, parent) in try await connection.rows("""
            SELECT piece_id, parent_id FROM based_on WHERE piece_id = ANY(\(ids)) ORDER BY position
            """, logger).map({ try $0.decode((String, String).self) }) {
            parents[piece, default: []].append(parent)
        }
        var assets: [String: [StoredAsset]] = [:]
        for (piece, kind, format, hash, size, dropped) in try await connection.rows("""
            SELECT piece_id, kind, format, hash, size, dropped FROM asset WHERE piece_id = ANY(\(ids))
            """, logger).map({ try $0.decode((String, String, String, String, Int, Bool).self) }) {
            guard let kind = AssetKind(rawValue: kind) else { continue }
            assets[piece, default: []].append(StoredAsset(kind: kind, format: format, hash: hash, size: UInt64(size), dropped: dropped))
        }
        var pieces: [String: StoredPiece] = [:]
        for row in try await connection.rows("SELECT * FROM piece WHERE id = ANY(\(ids))", logger) {
            let piece = try SharedCatalogueRows.piece(row.makeRandomAccess(), parents: parents, assets: assets)
            pieces[piece.id] = piece
        }
        return ids.compactMap { pieces[$0] }
    }

    /// A page of `query`'s pieces and their total, in one statement (one round trip): the
    /// total, then the page's pieces each with its parents and assets, or a single row
    /// without a piece when the page is empty.
    public func list(_ query: PieceQuery, viewer: Viewer) async throws -> (pieces: [StoredPiece], total: Int) {
        let owner = author(of: viewer.userName)
        var titleWord: String?
        if let text = query.titleContains { titleWord = await titleTrigrams().rarestWord(of: text) }
        var sql = SharedCatalogueRows.Filter()
        let total = SharedCatalogueCount.expression(query, owner: owner, titleWord: titleWord, binding: &sql)
        let conditions = SharedCatalogueRows.conditions(query, owner: owner, titleWord: titleWord, binding: &sql)
        let column = PieceStore.column(query.sortBy)
        var direction = query.descending ? "DESC" : "ASC"
        // As SQLite orders them: a piece without a tempo comes first going up, last going down.
        // (Only tempo may be missing; saying so of another column would keep its index unused.)
        if query.sortBy == .tempo { direction += query.descending ? " NULLS LAST" : " NULLS FIRST" }
        let keys = ["\(column) \(direction)", "id \(query.descending ? "DESC" : "ASC")"]
        let order = keys.joined(separator: ", ")
        let limit = sql.bind(Int(query.limit)), offset = sql.bind(Int(query.offset))
        let statement = PostgresQuery(unsafeSQL: """
            SELECT t.total, p.*,
                   ARRAY(SELECT parent_id FROM based_on b WHERE b.piece_id = p.id ORDER BY b.position) AS parent_ids,
                   a.kinds, a.formats, a.hashes, a.sizes, a.dropped_flags
            FROM (SELECT \(total) AS total) t
            LEFT JOIN LATERAL (
                SELECT * FROM piece WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(order) LIMIT \(limit) OFFSET \(offset)
            ) p ON true
            LEFT JOIN LATERAL (
                SELECT array_agg(kind) AS kinds, array_agg(format) AS formats, array_agg(hash) AS hashes,
                       array_agg(size) AS sizes, array_agg(dropped) AS dropped_flags
                FROM asset WHERE asset.piece_id = p.id
            ) a ON true
            ORDER BY \(keys.map { "p." + $0 }.joined(separator: ", "))
            """, binds: sql.binds)
        return try await transaction(readOnly: true, singleStatement: true) { connection in
            var total = 0
            var pieces: [StoredPiece] = []
            for row in try await connection.rows(statement, self.logger) {
                let columns = row.makeRandomAccess()
                total = try columns["total"].decode(Int.self)
                guard let id = try columns["id"].decode(String?.self) else { continue }
                pieces.append(try SharedCatalogueRows.piece(columns, parents: [id: try columns["parent_ids"].decode([String].self)],
                                                            assets: [id: try SharedCatalogueRows.assets(columns)]))
            }
            return (pieces, total)
        }
    }

    public func lineage(_ id: String) async throws -> (ancestors: [String], descendants: [String])? {
        try await transaction(readOnly: true) { connection in
            guard try await self.missing([id], connection).isEmpty else { return nil }
            func walk(from: String, to: String) async throws -> [String] {
                try await connection.rows(PostgresQuery(unsafeSQL: """
                    WITH RECURSIVE walk(id, depth) AS (
                        SELECT \(to), 1 FROM based_on WHERE \(from) = $1
                        UNION
                        SELECT b.\(to), walk.depth + 1 FROM based_on b JOIN walk ON b.\(from) = walk.id WHERE walk.depth < 10000
                    )
                    SELECT walk.id FROM walk JOIN piece ON piece.id = walk.id
                    GROUP BY walk.id ORDER BY min(walk.depth), min(piece.created_at), walk.id
                    """, binds: SharedCatalogueRows.binds(id)), self.logger).map { try $0.decode(String.self) }
            }
            return (try await walk(from: "piece_id", to: "parent_id"), try await walk(from: "parent_id", to: "piece_id"))
        }
    }

    // MARK: Asset bytes

    /// The cached copy of the object, fetched first when this host has none: written to
    /// staging while hashed, compared with its name, then moved into the cache.
    public func localPath(of asset: StoredAsset) async throws -> String {
        if let path = cache.lookUp(asset) { return path }
        let path = files.path(of: asset.hash)
        let staging = files.stagingPath(extension: "fetch")
        let fd = Glibc.open(staging, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreFailure("cannot create \(staging): \(String(cString: strerror(errno)))") }
        var kept = false
        defer {
            Glibc.close(fd)
            if !kept { unlink(staging) }
        }
        let (hash, size) = try await transaction { connection in
            var hasher = SHA256Hasher()
            var size: UInt64 = 0
            // A chunk a statement, each answered within the statement deadline.
            var sequence = 0
            while true {
                let rows = try await connection.rows(
                    "SELECT data FROM object_chunk WHERE hash = \(asset.hash) AND seq = \(sequence)", self.logger)
                guard let row = rows.first else { break }
                let chunk = try row.decode(ByteBuffer.self)
                try chunk.withUnsafeReadableBytes { bytes in
                    hasher.update(bytes)
                    try Self.writeAll(fd, bytes, path: staging)
                }
                size += UInt64(chunk.readableBytes)
                sequence += 1
            }
            return (hasher.finalize(), size)
        }
        guard hash == asset.hash, size == asset.size else {
            throw DamagedAsset("the shared catalogue's copy of object \(asset.hash) is damaged (its \(size) bytes "
                               + "hash to \(hash)); nothing was delivered")
        }
        guard fsync(fd) == 0 else { throw StoreFailure("cannot sync \(staging): \(String(cString: strerror(errno)))") }
        do {
            if try files.commit(ObjectStore.Staged(path: staging, hash: hash, size: size)) { cache.admitted(hash, size: size) }
        } catch {
            throw StoreFailure("cannot keep object \(hash) in the cache: \(error)")
        }
        kept = true
        return path
    }

    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        var written = 0
        while written < bytes.count {
            let result = write(fd, bytes.baseAddress! + written, bytes.count - written)
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { throw StoreFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
            written += result
        }
    }

    /// Makes the staged file an object of the catalogue within the transaction, unless it
    /// is one already (then holds it against deletion until the transaction ends). Returns
    /// whether it was uploaded. With `verifying`, the bytes read are hashed on the way and
    /// must match the object's name and size (`DamagedObject`), else nothing is kept.
    @discardableResult
    func upload(_ staged: ObjectStore.Staged, _ connection: PostgresConnection, verifying: Bool = false) async throws -> Bool {
        while true {
            let inserted = try await connection.rows("""
                INSERT INTO object (hash, size) VALUES (\(staged.hash), \(Int(staged.size))) ON CONFLICT (hash) DO NOTHING RETURNING 1
                """, logger)
            if inserted.isEmpty {
                let held = try await connection.rows("SELECT 1 FROM object WHERE hash = \(staged.hash) FOR KEY SHARE", logger)
                if held.isEmpty { continue }  // deleted in between: store it again
                return false
            }
            let fd = Glibc.open(staged.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw StoreFailure("cannot open \(staged.path): \(String(cString: strerror(errno)))") }
            defer { Glibc.close(fd) }
            var sequence = 0
            var hasher = SHA256Hasher()
            var size: UInt64 = 0
            var buffer = ByteBufferAllocator().buffer(capacity: Self.chunkSize)
            while true {
                buffer.clear()
                let count = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.chunkSize) { target -> Int in
                    var filled = 0
                    while filled < Self.chunkSize {
                        let result = read(fd, target.baseAddress! + filled, Self.chunkSize - filled)
                        if result < 0, errno == EINTR { continue }
                        guard result >= 0 else { throw StoreFailure("cannot read \(staged.path): \(String(cString: strerror(errno)))") }
                        if result == 0 { break }
                        filled += result
                    }
                    return filled
                }
                if count == 0, sequence > 0 { break }
                if verifying {
                    buffer.withUnsafeReadableBytes { hasher.update($0) }
                    size += UInt64(count)
                }
                try await connection.rows("""
                    INSERT INTO object_chunk (hash, seq, data) VALUES (\(staged.hash), \(sequence), \(buffer))
                    """, logger)
                sequence += 1
                if count < Self.chunkSize { break }
            }
            if verifying {
                let hash = hasher.finalize()
                guard hash == staged.hash, size == staged.size else {
                    throw DamagedObject(path: staged.path, hash: staged.hash, size: staged.size, found: (hash, size))
                }
            }
            return true
        }
    }

    // MARK: Writing

    public func insert(_ piece: StoredPiece, objects staged: [ObjectStore.Staged]) async throws {
        do {
            try await store(piece, objects: staged)
        } catch {
            staged.forEach(files.discard)
            throw error
        }
        // This host has the bytes already: they become its cached objects.
        for file in staged {
            do {
                if try files.commit(file) { cache.admitted(file.hash, size: file.size) }
            } catch {
                files.discard(file)
            }
        }
    }

    /// Adds `piece` and the objects in `files` (read, not consumed) in one transaction;
    /// with `checkingParents`, only when every piece it is based on exists.
    func store(_ piece: StoredPiece, objects files: [ObjectStore.Staged], checkingParents: Bool = true,
               verifying: Bool = false) async throws {
        try await transaction { connection in
            for file in Self.unique(files) { try await self.upload(file, connection, verifying: verifying) }
            if checkingParents, let first = try await self.missing(piece.draft.basedOn, connection).first {
                throw RuleViolation(.basedOnNotFound, field: .basedOn, "no piece \(first)")
            }
            // The change log and the tally follow by the owner's triggers.
            try await self.insertRows(piece, connection)
        }
    }

    /// One staged file per object.
    static func unique(_ staged: [ObjectStore.Staged]) -> [ObjectStore.Staged] {
        var seen: Set<String> = []
        return staged.filter { seen.insert($0.hash).inserted }
    }

    func insertRows(_ piece: StoredPiece, _ connection: PostgresConnection) async throws {
        let draft = piece.draft
        try await connection.rows("""
            INSERT INTO piece (id, title, description, length_us, tempo, loop_start_us, loop_end_us, ts_upper, ts_lower,
                               tonality, scale_mask, root, listed, attachment_mime, author, author_user, author_uid, created_at,
                               sample_rate, channels, loudness_lufs, true_peak_dbtp)
            VALUES (\(piece.id), \(draft.title), \(draft.description), \(Int(draft.lengthMicroseconds ?? 0)), \(draft.tempo),
                    \(draft.loopStart.map { Int($0) }), \(draft.loopEnd.map { Int($0) }),
                    \(draft.timeSignature.map { Int($0.upper) }), \(draft.timeSignature.map { Int($0.lower) }),
                    \(draft.tonality.name), \(draft.tonality.scaleMask), \(draft.tonality.root.map { Int($0) }), \(draft.listed),
                    \(draft.attachmentMimeType), \(piece.author), \(piece.author), \(Int(piece.authorUID)),
                    \(piece.createdAt), \(Int(piece.facts.sampleRate)), \(Int(piece.facts.channels)),
                    \(piece.facts.loudnessLufs), \(piece.facts.truePeakDbtp))
            """, logger)
        for asset in piece.assets {
            try await connection.rows("""
                INSERT INTO asset (piece_id, kind, format, hash, size, dropped)
                VALUES (\(piece.id), \(asset.kind.rawValue), \(asset.format), \(asset.hash), \(Int(asset.size)), \(asset.dropped))
                """, logger)
        }
        for (position, parent) in draft.basedOn.enumerated() {
            try await connection.rows("""
                INSERT INTO based_on (piece_id, parent_id, position) VALUES (\(piece.id), \(parent), \(position)) ON CONFLICT DO NOTHING
                """, logger)
        }
    }

    public func addTranscode(_ asset: StoredAsset, object staged: ObjectStore.Staged, of id: String) async throws -> Bool {
        let recorded: Bool
        do {
            recorded = try await transaction { connection in
                // Held against deletion until this transaction ends.
                let exists = try await connection.rows("SELECT 1 FROM piece WHERE id = \(id) FOR SHARE", self.logger)
                guard !exists.isEmpty else { return false }
                let uploaded = try await self.upload(staged, connection)
                let inserted = try await connection.rows("""
                    INSERT INTO asset (piece_id, kind, format, hash, size, dropped)
                    VALUES (\(id), \(asset.kind.rawValue), \(asset.format), \(asset.hash), \(Int(asset.size)), false)
                    ON CONFLICT DO NOTHING RETURNING 1
                    """, self.logger)
                if inserted.isEmpty, uploaded {
                    // Another host recorded its own transcode first: it is the one kept.
                    try await connection.run("SELECT object_remove_unnamed(\([asset.hash]))", self.logger)
                }
                return true
            }
        } catch {
            files.discard(staged)
            throw error
        }
        if recorded {
            do {
                if try files.commit(staged) { cache.admitted(staged.hash, size: staged.size) }
            } catch {
                files.discard(staged)
            }
        } else {
            files.discard(staged)
        }
        return recorded
    }

    public func delete(_ id: String) async throws -> StoredPiece? {
        let deleted = try await transaction { connection -> (StoredPiece, [String])? in
            guard let piece = try await self.pieces([id], connection).first else { return nil }
            // The database deletes only what this host may delete: nothing else.
            let gone = try await connection.rows("DELETE FROM piece WHERE id = \(id) RETURNING 1", self.logger)
            guard !gone.isEmpty else {
                throw NotPermitted("the catalogue lets host \(self.configuration.hostName) delete only the pieces dropped on it "
                                   + "(its role is no fleet administrator's); \(id) was dropped by \(piece.author)")
            }
            // Whether another piece (this host may not see them all) still names an object is
            // the owner's function's to tell.
            let hashes = Array(Set(piece.assets.map(\.hash)))
            let orphaned = try await connection.values("SELECT object_remove_unnamed(\(hashes))", String.self, self.logger)
            return (piece, orphaned)
        }
        guard let (piece, orphaned) = deleted else { return nil }
        orphaned.forEach(files.remove)
        return piece
    }
}
