import ContractCore
import Foundation
import GRDB
import PiecesCore

/// The piece store: metadata in SQLite, bytes in the object store. A piece becomes
/// visible in one transaction, after all its objects are on disk.
public final class PieceStore: Sendable {
    public let objects: ObjectStore
    let pool: DatabasePool

    /// Opens (creating) the store in `directory`, then sweeps away staged files and
    /// objects that no committed piece names.
    public init(directory: URL) throws {
        objects = try ObjectStore(directory: directory)
        pool = try PieceDatabase.open(path: Self.databasePath(in: directory))
    }

    /// The file of a private store's database in `directory`.
    public static func databasePath(in directory: URL) -> String {
        directory.appendingPathComponent("pieces.sqlite").path
    }

    /// The ids of the pieces of the private store in `directory`, read without changing
    /// anything there; nil when the directory holds no private store.
    public static func pieceIDs(ofStoreIn directory: URL) throws -> [String]? {
        let path = databasePath(in: directory)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in
            guard try db.tableExists("piece") else { return [] }
            return try String.fetchAll(db, sql: "SELECT id FROM piece")
        }
    }

    /// Removes what a crash left behind; returns what was removed.
    @discardableResult
    public func sweep() throws -> (staged: Int, objects: Int) {
        let referenced = try pool.read { db in Set(try String.fetchAll(db, sql: "SELECT DISTINCT hash FROM asset")) }
        return objects.sweep(keeping: referenced)
    }

    public func count() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM piece") ?? 0 }
    }

    /// The ids among `ids` that are not pieces.
    public func missing(_ ids: [String]) throws -> [String] {
        try pool.read { db in try Self.missing(ids, db) }
    }

    static func missing(_ ids: [String], _ db: Database) throws -> [String] {
        try ids.filter { try Int.fetchOne(db, sql: "SELECT 1 FROM piece WHERE id = ?", arguments: [$0]) == nil }
    }

    // MARK: Writing

    /// A write transaction; a database that cannot grow (`SQLITE_FULL`) is `OutOfSpace`,
    /// the transaction rolled back.
    func write<T>(_ updates: (Database) throws -> T) throws -> T {
        do {
            return try pool.write(updates)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_FULL {
            throw OutOfSpace("the piece store is out of space: the database cannot grow (\(error.message ?? "disk full"))")
        }
    }

    /// Adds a complete piece whose objects are committed. `BasedOn` ids are checked again
    /// inside the transaction.
    public func insert(_ piece: StoredPiece) throws {
        try write { db in
            let missing = try Self.missing(piece.draft.basedOn, db)
            if let first = missing.first {
                throw RuleViolation(.basedOnNotFound, field: .basedOn, "no piece \(first)")
            }
            try Self.insertRows(piece, db)
        }
    }

    static func insertRows(_ piece: StoredPiece, _ db: Database) throws {
        let draft = piece.draft
        try db.execute(sql: """
            INSERT INTO piece (id, title, description, length_us, tempo, loop_start_us, loop_end_us, ts_upper, ts_lower,
                               tonality, scale_mask, root, listed, attachment_mime, author, author_uid, created_at,
                               sample_rate, channels, loudness_lufs, true_peak_dbtp)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [
                piece.id, draft.title, draft.description, draft.lengthMicroseconds.map(Int64.init), draft.tempo,
                draft.loopStart.map(Int64.init), draft.loopEnd.map(Int64.init),
                draft.timeSignature.map { Int($0.upper) }, draft.timeSignature.map { Int($0.lower) },
                draft.tonality.name, draft.tonality.scaleMask, draft.tonality.root.map { Int($0) }, draft.listed,
                draft.attachmentMimeType, piece.author, Int64(piece.authorUID), piece.createdAt,
                Int64(piece.facts.sampleRate), Int64(piece.facts.channels), piece.facts.loudnessLufs, piece.facts.truePeakDbtp,
            ])
        for asset in piece.assets { try Self.insert(asset, of: piece.id, db) }
        for (position, parent) in draft.basedOn.enumerated() {
            try db.execute(sql: "INSERT OR IGNORE INTO based_on (piece_id, parent_id, position) VALUES (?, ?, ?)",
                           arguments: [piece.id, parent, position])
        }
    }

    /// Adds many complete pieces in one transaction (bulk loading; `BasedOn` unchecked).
    public func insertAll(_ pieces: [StoredPiece]) throws {
        try write { db in
            for piece in pieces { try Self.insertRows(piece, db) }
        }
    }

    static func insert(_ asset: StoredAsset, of id: String, _ db: Database) throws {
        try db.execute(sql: "INSERT INTO asset (piece_id, kind, format, hash, size, dropped) VALUES (?, ?, ?, ?, ?, ?)",
                       arguments: [id, asset.kind.rawValue, asset.format, asset.hash, Int64(asset.size), asset.dropped])
    }

    /// Records a transcode of a piece's asset; false when the piece is gone (the caller
    /// then removes the object if nothing else names it).
    public func addTranscode(_ asset: StoredAsset, of id: String) throws -> Bool {
        try write { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM piece WHERE id = ?", arguments: [id]) != nil else { return false }
            try db.execute(sql: "INSERT OR IGNORE INTO asset (piece_id, kind, format, hash, size, dropped) VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: [id, asset.kind.rawValue, asset.format, asset.hash, Int64(asset.size), false])
            return true
        }
    }

    /// Deletes a piece; returns it (nil when there was none). Objects nobody names any
    /// more are removed after the commit.
    public func delete(_ id: String) throws -> StoredPiece? {
        let deleted = try write { db -> (StoredPiece, [String])? in
            guard let piece = try Self.piece(id, db) else { return nil }
            try db.execute(sql: "DELETE FROM piece WHERE id = ?", arguments: [id])
            let orphaned = try Set(piece.assets.map(\.hash)).filter { hash in
                try Int.fetchOne(db, sql: "SELECT 1 FROM asset WHERE hash = ? LIMIT 1", arguments: [hash]) == nil
            }
            return (piece, Array(orphaned))
        }
        guard let (piece, orphaned) = deleted else { return nil }
        orphaned.forEach(objects.remove)
        return piece
    }

    /// Whether any piece names the object `hash`.
    public func isReferenced(_ hash: String) throws -> Bool {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT 1 FROM asset WHERE hash = ? LIMIT 1", arguments: [hash]) != nil }
    }

    // MARK: Reading

    public func piece(_ id: String) throws -> StoredPiece? {
        try pool.read { db in try Self.piece(id, db) }
    }

    static func piece(_ id: String, _ db: Database) throws -> StoredPiece? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM piece WHERE id = ?", arguments: [id]) else { return nil }
        return try piece(row, db)
    }

    static func piece(_ row: Row, _ db: Database) throws -> StoredPiece {
        let id: String = row["id"]
        let parents = try String.fetchAll(db, sql: "SELECT parent_id FROM based_on WHERE piece_id = ? ORDER BY position", arguments: [id])
        let assets = try Row.fetchAll(db, sql: "SELECT * FROM asset WHERE piece_id = ?", arguments: [id]).compactMap(asset)
        return piece(row, parents: parents, assets: assets)
    }

    /// The pieces with `ids`, in that order, in three queries.
    static func pieces(_ ids: [String], _ db: Database) throws -> [StoredPiece] {
        guard !ids.isEmpty else { return [] }
        let marks = Array(repeating: "?", count: ids.count).joined(separator: ", ")
        let arguments = StatementArguments(ids)
        var rows: [String: Row] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT * FROM piece WHERE id IN (\(marks))", arguments: arguments) {
            rows[row["id"]] = row
        }
        var parents: [String: [String]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT piece_id, parent_id FROM based_on WHERE piece_id IN (\(marks)) ORDER BY position",
                                    arguments: arguments) {
            parents[row["piece_id"], default: []].append(row["parent_id"])
        }
        var assets: [String: [StoredAsset]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT * FROM asset WHERE piece_id IN (\(marks))", arguments: arguments) {
            if let asset = asset(row) { assets[row["piece_id"], default: []].append(asset) }
        }
        return ids.compactMap { id in rows[id].map { piece($0, parents: parents[id] ?? [], assets: assets[id] ?? []) } }
    }

    static func asset(_ row: Row) -> StoredAsset? {
        guard let kind = AssetKind(rawValue: row["kind"]) else { return nil }
        return StoredAsset(kind: kind, format: row["format"], hash: row["hash"], size: UInt64(row["size"] as Int64), dropped: row["dropped"])
    }

    static func piece(_ row: Row, parents: [String], assets: [StoredAsset]) -> StoredPiece {
        let upper: Int? = row["ts_upper"], lower: Int? = row["ts_lower"]
        var draft = PieceDraft(title: row["title"], description: row["description"],
                               lengthMicroseconds: UInt64(row["length_us"] as Int64), tempo: row["tempo"],
                               loopStart: (row["loop_start_us"] as Int64?).map(UInt64.init),
                               loopEnd: (row["loop_end_us"] as Int64?).map(UInt64.init),
                               basedOn: parents,
                               tonality: Tonality.stored(name: row["tonality"], scaleMask: row["scale_mask"],
                                                         root: (row["root"] as Int?).map(UInt8.init)),
                               listed: row["listed"], attachmentMimeType: row["attachment_mime"])
        if let upper, let lower { draft.timeSignature = try? TimeSignature(upper: UInt8(upper), lower: UInt8(lower)) }
        return StoredPiece(id: row["id"], draft: draft, createdAt: row["created_at"], author: row["author"],
                           authorUID: UInt32(row["author_uid"] as Int64),
                           facts: MixStemFacts(sampleRate: UInt32(row["sample_rate"] as Int64), channels: UInt32(row["channels"] as Int64),
                                               loudnessLufs: row["loudness_lufs"], truePeakDbtp: row["true_peak_dbtp"]),
                           assets: assets.sorted(by: assetOrder))
    }

    /// Kind order, the dropped asset before transcodes, then by format.
    public static func assetOrder(_ a: StoredAsset, _ b: StoredAsset) -> Bool {
        let kindA = AssetKind.allCases.firstIndex(of: a.kind) ?? 0, kindB = AssetKind.allCases.firstIndex(of: b.kind) ?? 0
        if kindA != kindB { return kindA < kindB }
        if a.dropped != b.dropped { return a.dropped }
        return a.format < b.format
    }

    /// The pieces `query` selects that `viewerUID` may see (listed ones, and its own),
    /// one page of them, and how many match in all.
    public func list(_ query: PieceQuery, viewerUID: UInt32) throws -> (pieces: [StoredPiece], total: Int) {
        var conditions = ["(listed = 1 OR author_uid = ?)"]
        var arguments: [any DatabaseValueConvertible] = [Int64(viewerUID)]
        func add(_ condition: String, _ values: any DatabaseValueConvertible...) {
            conditions.append(condition)
            arguments.append(contentsOf: values)
        }
        if let text = query.titleContains { add("title LIKE ? ESCAPE '\\'", Self.containing(text)) }
        if let minimum = query.tempoMin { add("tempo >= ?", minimum) }
        if let maximum = query.tempoMax { add("tempo <= ?", maximum) }
        if let upper = query.timeSignatureUpper { add("ts_upper = ?", Int(upper)) }
        if let lower = query.timeSignatureLower { add("ts_lower = ?", Int(lower)) }
        if let tonality = query.tonality { add("tonality = ?", tonality) }
        if let root = query.root { add("root = ?", Int(root)) }
        if let parent = query.basedOn { add("id IN (SELECT piece_id FROM based_on WHERE parent_id = ?)", parent) }
        if let author = query.author { add("author = ?", author) }
        if let after = query.createdAfter { add("created_at > ?", after) }
        if let before = query.createdBefore { add("created_at < ?", before) }
        let filter = conditions.joined(separator: " AND ")
        let column = Self.column(query.sortBy)
        let direction = query.descending ? "DESC" : "ASC"
        return try pool.read { db in
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM piece WHERE \(filter)",
                                         arguments: StatementArguments(arguments)) ?? 0
            // The page's ids first (often from an index alone), then those pieces.
            let ids = try String.fetchAll(db, sql: """
                SELECT id FROM piece WHERE \(filter) ORDER BY \(column) \(direction), id \(direction) LIMIT ? OFFSET ?
                """, arguments: StatementArguments(arguments + [Int64(query.limit), Int64(query.offset)]))
            return (try Self.pieces(ids, db), total)
        }
    }

    /// The column a `List` sorts by (the same in every catalogue's schema).
    public static func column(_ key: PieceQuery.SortKey) -> String {
        switch key {
        case .created: "created_at"
        case .title: "title"
        case .tempo: "tempo"
        case .length: "length_us"
        }
    }

    /// A `LIKE … ESCAPE '\'` pattern matching titles that contain `text` literally.
    public static func containing(_ text: String) -> String {
        "%" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
    }

    /// Ancestors and descendants of `id`, transitively, nearest first (then oldest first).
    public func lineage(_ id: String) throws -> (ancestors: [String], descendants: [String])? {
        try pool.read { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM piece WHERE id = ?", arguments: [id]) != nil else { return nil }
            func walk(from: String, to: String) throws -> [String] {
                try String.fetchAll(db, sql: """
                    WITH RECURSIVE walk(id, depth) AS (
                        SELECT \(to), 1 FROM based_on WHERE \(from) = ?
                        UNION
                        SELECT b.\(to), walk.depth + 1 FROM based_on b JOIN walk ON b.\(from) = walk.id WHERE walk.depth < 10000
                    )
                    SELECT walk.id FROM walk JOIN piece ON piece.id = walk.id
                    GROUP BY walk.id ORDER BY MIN(walk.depth), piece.created_at, walk.id
                    """, arguments: [id])
            }
            return (try walk(from: "piece_id", to: "parent_id"), try walk(from: "parent_id", to: "piece_id"))
        }
    }

    /// Every piece's id, oldest first (a piece comes after those it is based on).
    public func idsOldestFirst() throws -> [String] {
        try pool.read { db in try String.fetchAll(db, sql: "SELECT id FROM piece ORDER BY created_at, id") }
    }

    /// Every object hash any piece names.
    public func referencedObjects() throws -> Set<String> {
        try pool.read { db in Set(try String.fetchAll(db, sql: "SELECT DISTINCT hash FROM asset")) }
    }
}
