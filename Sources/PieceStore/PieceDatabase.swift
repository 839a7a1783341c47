import GRDB

/// The SQLite schema of the piece store (WAL, foreign keys), created and upgraded by
/// migrations, with an index for every `List` filter and sort.
enum PieceDatabase {
    static func open(path: String) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try migrator.migrate(pool)
        try pool.write { db in try db.execute(sql: "PRAGMA optimize") }
        return pool
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("pieces-v1") { db in
            try db.create(table: "piece") { t in
                t.column("id", .text).primaryKey()
                t.column("title", .text).notNull()
                t.column("description", .text).notNull()
                t.column("length_us", .integer).notNull()
                t.column("tempo", .double)
                t.column("loop_start_us", .integer)
                t.column("loop_end_us", .integer)
                t.column("ts_upper", .integer)
                t.column("ts_lower", .integer)
                t.column("tonality", .text).notNull()
                t.column("scale_mask", .integer).notNull()
                t.column("root", .integer)
                t.column("listed", .boolean).notNull()
                t.column("attachment_mime", .text)
                t.column("author", .text).notNull()
                t.column("author_uid", .integer).notNull()
                t.column("created_at", .text).notNull()
                t.column("sample_rate", .integer).notNull()
                t.column("channels", .integer).notNull()
                t.column("loudness_lufs", .double).notNull()
                t.column("true_peak_dbtp", .double).notNull()
            }
            try db.create(table: "asset") { t in
                t.column("piece_id", .text).notNull().references("piece", onDelete: .cascade)
                t.column("kind", .text).notNull()
                t.column("format", .text).notNull()
                t.column("hash", .text).notNull()
                t.column("size", .integer).notNull()
                t.column("dropped", .boolean).notNull()
                t.primaryKey(["piece_id", "kind", "format"])
            }
            try db.create(table: "based_on") { t in
                t.column("piece_id", .text).notNull().references("piece", onDelete: .cascade)
                t.column("parent_id", .text).notNull()
                t.column("position", .integer).notNull()
                t.primaryKey(["piece_id", "parent_id"])
            }
            try db.create(index: "piece_created", on: "piece", columns: ["created_at"])
            try db.create(index: "piece_title", on: "piece", columns: ["title"])
            try db.create(index: "piece_tempo", on: "piece", columns: ["tempo"])
            try db.create(index: "piece_length", on: "piece", columns: ["length_us"])
            try db.create(index: "piece_tonality_tempo", on: "piece", columns: ["tonality", "tempo"])
            try db.create(index: "piece_tonality_root", on: "piece", columns: ["tonality", "root"])
            try db.create(index: "piece_time_signature", on: "piece", columns: ["ts_upper", "ts_lower"])
            try db.create(index: "piece_author", on: "piece", columns: ["author"])
            try db.create(index: "asset_hash", on: "asset", columns: ["hash"])
            try db.create(index: "based_on_parent", on: "based_on", columns: ["parent_id"])
        }
        migrator.registerMigration("pieces-v2-list-cover") { db in
            // The commonest List (a tonality, a tempo range, by creation) answered from one
            // index: counting and choosing the page never read the table.
            try db.create(index: "piece_list_tonality_tempo", on: "piece",
                          columns: ["tonality", "tempo", "listed", "author_uid", "created_at", "id"])
            try db.drop(index: "piece_tonality_tempo")
        }
        return migrator
    }
}
