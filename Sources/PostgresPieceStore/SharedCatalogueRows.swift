import EarshotSync
import Logging
import PieceStore
import PiecesCore
import PostgresNIO

/// Rows of the shared catalogue as pieces, and `List` requests as SQL.
enum SharedCatalogueRows {
    static func piece(_ row: PostgresRandomAccessRow, parents: [String: [String]], assets: [String: [StoredAsset]]) throws -> StoredPiece {
        func column<T: PostgresDecodable>(_ name: String, _ type: T.Type = T.self) throws -> T { try row[name].decode(T.self) }
        let id: String = try column("id")
        let upper: Int? = try column("ts_upper"), lower: Int? = try column("ts_lower")
        let root: Int? = try column("root")
        let loopStart: Int? = try column("loop_start_us"), loopEnd: Int? = try column("loop_end_us")
        var draft = PieceDraft(title: try column("title"), description: try column("description"),
                               lengthMicroseconds: UInt64(try column("length_us", Int.self)), tempo: try column("tempo"),
                               loopStart: loopStart.map(UInt64.init), loopEnd: loopEnd.map(UInt64.init),
                               basedOn: parents[id] ?? [],
                               tonality: Tonality.stored(name: try column("tonality"), scaleMask: try column("scale_mask"),
                                                         root: root.map(UInt8.init)),
                               listed: try column("listed"), attachmentMimeType: try column("attachment_mime"))
        if let upper, let lower { draft.timeSignature = try? TimeSignature(upper: UInt8(upper), lower: UInt8(lower)) }
        return StoredPiece(id: id, draft: draft, createdAt: try column("created_at"), author: try column("author"),
                           authorUID: UInt32(truncatingIfNeeded: try column("author_uid", Int.self)),
                           facts: MixStemFacts(sampleRate: UInt32(try column("sample_rate", Int.self)),
                                               channels: UInt32(try column("channels", Int.self)),
                                               loudnessLufs: try column("loudness_lufs"), truePeakDbtp: try column("true_peak_dbtp")),
                           assets: (assets[id] ?? []).sorted(by: PieceStore.assetOrder))
    }

    /// A piece's assets from the arrays `List` aggregates them into (`NULL` for none).
    static func assets(_ row: PostgresRandomAccessRow) throws -> [StoredAsset] {
        guard let kinds = try row["kinds"].decode([String]?.self) else { return [] }
        let formats = try row["formats"].decode([String].self), hashes = try row["hashes"].decode([String].self)
        let sizes = try row["sizes"].decode([Int].self), dropped = try row["dropped_flags"].decode([Bool].self)
        guard formats.count == kinds.count, hashes.count == kinds.count, sizes.count == kinds.count, dropped.count == kinds.count else {
            throw StoreFailure("the catalogue answered assets of unequal lengths")
        }
        return kinds.indices.compactMap { index in
            AssetKind(rawValue: kinds[index]).map {
                StoredAsset(kind: $0, format: formats[index], hash: hashes[index], size: UInt64(sizes[index]), dropped: dropped[index])
            }
        }
    }

    /// A statement's parameters, numbered as its parts are written.
    struct Filter {
        var binds = PostgresBindings()

        /// `$n` for `value`, added to the parameters.
        mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
    }

    /// The conditions selecting the pieces `query` asks for that `owner` (`user@host`) may
    /// see: listed ones and their own (`author_user` holds the owner, `user@host`, since
    /// schema version 5). Their parameters are added to `sql`'s (one statement's parts
    /// numbered together). With a `titleWord`, the title index looks that word up and the
    /// whole text is checked on the titles it finds (see `TitleTrigrams`).
    static func conditions(_ query: PieceQuery, owner: String, titleWord: String? = nil, binding sql: inout Filter) -> [String] {
        var conditions: [String] = []
        func add<Value: PostgresDynamicTypeEncodable>(_ condition: (String) -> String, _ value: Value) {
            conditions.append(condition(sql.bind(value)))
        }
        add({ "(listed OR author_user = \($0))" }, owner)
        // ILIKE: case-insensitive, as SQLite's LIKE is. The title index is read through
        // `piece_titled` (see `SharedCatalogueAccess.titleFunction`): under the row policies
        // a plain ILIKE here would be checked on every piece.
        if let text = query.titleContains {
            if let titleWord {
                // The whole text is checked on the few rows the word finds.
                add({ "id IN (SELECT piece_titled(\($0)))" }, PieceStore.containing(titleWord))
                add({ "title ILIKE \($0) ESCAPE '\\'" }, PieceStore.containing(text))
            } else {
                add({ "id IN (SELECT piece_titled(\($0)))" }, PieceStore.containing(text))
            }
        }
        if let minimum = query.tempoMin { add({ "tempo >= \($0)" }, minimum) }
        if let maximum = query.tempoMax { add({ "tempo <= \($0)" }, maximum) }
        if let upper = query.timeSignatureUpper { add({ "ts_upper = \($0)" }, Int(upper)) }
        if let lower = query.timeSignatureLower { add({ "ts_lower = \($0)" }, Int(lower)) }
        if let tonality = query.tonality { add({ "tonality = \($0)" }, tonality) }
        if let root = query.root { add({ "root = \($0)" }, Int(root)) }
        if let parent = query.basedOn { add({ "id IN (SELECT piece_id FROM based_on WHERE parent_id = \($0))" }, parent) }
        if let author = query.author { add({ "author = \($0)" }, author) }
        if let after = query.createdAfter { add({ "created_at > \($0)" }, after) }
        if let before = query.createdBefore { add({ "created_at < \($0)" }, before) }
        return conditions
    }

    static func binds(_ values: String...) -> PostgresBindings {
        var binds = PostgresBindings()
        values.forEach { binds.append($0) }
        return binds
    }
}

/// The connection was closed before its query was answered (by the server, or by the pool
/// when the path to the server was lost).
struct ConnectionLost: Error, CustomStringConvertible {
    var description: String { "the server closed the connection" }
}

extension PostgresFailure {
    /// An error's text for a log: the server's message when it sent one.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return PostgresFailure.plainly("\(underlying)") }
            return "\(error.code)"
        }
        return "\(error)"
    }
}

/// How long a connection's statements wait for their answer: past it, the path to the
/// server is taken to be lost (a network that drops everything sends no reset), the
/// connection is closed and the statement fails with `StatementTimedOut`. Longer than the
/// server's own `statement_timeout` (15 s) by default, so that a slow statement is the
/// server's to end, and shorter than a D-Bus caller's default wait (25 s), so that the
/// caller hears why; a lost path is noticed sooner by the listener's heartbeat, and then
/// (`pathLost`) the statements waiting give up at once. Kept by connection, not in task
/// locals, which the services' executors do not carry.
enum StatementLimits {
    struct Limits: Sendable {
        var deadline: Duration = .seconds(20)
        /// Whether the path to the server is known to be lost.
        var pathLost: @Sendable () -> Bool = { false }
    }

    /// How often a waiting statement looks at `pathLost`.
    static let lookEvery: Duration = .milliseconds(100)
    private static let byConnection = Locked<[ObjectIdentifier: Limits]>([:])

    static func set(_ limits: Limits, for connection: PostgresConnection) {
        byConnection.withLock { $0[ObjectIdentifier(connection)] = limits }
    }

    static func forget(_ connection: PostgresConnection) {
        _ = byConnection.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    static func of(_ connection: PostgresConnection) -> Limits {
        byConnection.withLock { $0[ObjectIdentifier(connection)] } ?? Limits()
    }
}

/// A statement got no answer within its connection's deadline, or the path to the server
/// was lost while it waited.
struct StatementTimedOut: Error, CustomStringConvertible {
    let after: Duration
    let pathLost: Bool
    var description: String {
        pathLost ? "the server stopped answering" : "the server did not answer within \(after)"
    }
}

extension PostgresConnection {
    /// Every row `query` returns, within the connection's `StatementLimits`.
    @discardableResult
    func rows(_ query: PostgresQuery, _ logger: Logger) async throws -> [PostgresRow] {
        // A query written to a connection already closed is never answered: refuse it here.
        guard !isClosed else { throw ConnectionLost() }
        return try await answer(to: query, logger)
    }

    /// The rows of `query`, or an error as soon as there will be none: the connection
    /// closed under it, the path to the server lost, or the deadline passed. A query written
    /// in the moment between the server closing the connection and PostgresNIO noticing is
    /// dropped unanswered, and its await never ends: watching `isClosed` ends the wait, and
    /// the await is left behind (`firstToEnd`), not waited for.
    func answer(to query: PostgresQuery, _ logger: Logger) async throws -> [PostgresRow] {
        enum Ending: Sendable { case answered([PostgresRow]), closed, pathLost, deadline }
        let limits = StatementLimits.of(self)
        let (limit, pathLost) = (limits.deadline, limits.pathLost)
        let ending: Ending = try await firstToEnd({
            let sequence: PostgresRowSequence = try await self.query(query, logger: logger)
            return .answered(try await sequence.collect())
        }, {
            let deadline = ContinuousClock.now + limit
            while ContinuousClock.now < deadline {
                if self.isClosed { return .closed }
                if pathLost() { return .pathLost }
                try await Task.sleep(for: min(StatementLimits.lookEvery, deadline - .now))
            }
            return .deadline
        })
        switch ending {
        case .answered(let rows):
            return rows
        case .closed:
            throw ConnectionLost()
        case .pathLost, .deadline:
            // No answer in time: the statement can only fail now, with the connection.
            try? await close()
            throw StatementTimedOut(after: limit, pathLost: { if case .pathLost = ending { true } else { false } }())
        }
    }

    /// The first column of every row `query` returns.
    func values<Value: PostgresDecodable>(_ query: PostgresQuery, _ type: Value.Type, _ logger: Logger) async throws -> [Value] {
        try await rows(query, logger).map { try $0.decode(Value.self) }
    }

    /// Runs a statement whose rows do not matter.
    func run(_ query: PostgresQuery, _ logger: Logger) async throws {
        _ = try await rows(query, logger)
    }
}
