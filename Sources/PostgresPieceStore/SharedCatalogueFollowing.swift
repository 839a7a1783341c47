import Logging
import PieceStore
import PostgresNIO

/// Following other hosts' changes, and knowing whether the server can be reached.
///
/// A connection of its own listens (`LISTEN`) for news of changes; each notification,
/// every reconnection and every heartbeat that finds something left to tell makes the host
/// read the change log from where it is, in order, so that a drop or deletion made while
/// this host was cut off is announced once it is back, once. A change is passed on before
/// the host's place moves past it (at least once: a drop whose piece cannot be read now is
/// tried again, not skipped). A heartbeat on the same connection notices a path that drops
/// everything silently (no reset ever comes) within 3 s: the catalogue is then unreachable,
/// the calls waiting on it and those that come fail at once, and the listener connects
/// again until the server answers; a heartbeat answered clears it too (a pooled connection
/// that timed out on its own path does not leave the host failing).
///
/// The log is ordered by the transaction that made each change (`tx`, then `seq`); no lock
/// orders the writers, so a change may commit after one that follows it in that order. A
/// host passes each change on as soon as it sees it, and moves its place in the log only
/// past changes below the oldest transaction still running anywhere on the server
/// (`pg_snapshot_xmin`): below that, everything is committed or never will be. Changes it
/// told above its place are remembered (`known`) and not told again.

/// A place in the change log: the last change announced (or passed over).
struct ChangeCursor: Sendable, Equatable {
    /// The transaction (`xid8`) and the change's number.
    var tx: UInt64 = 0
    var seq: Int64 = 0
    /// Changes after the place already told (or already there when the host started: its
    /// clients have seen the catalogue with them): passed over when read again.
    var known: Set<Int64> = []
    /// Whether a change is left to tell (the log or a piece could not be read).
    var pending = false
    /// Whether the log is being read, and whether to read it again when that is done.
    var reading = false
    var readAgain = false

    static func < (a: ChangeCursor, b: (tx: UInt64, seq: Int64)) -> Bool { (a.tx, a.seq) < (b.tx, b.seq) }
}

extension SharedPieceCatalogue {
    /// How often the heartbeat asks, and how long it waits.
    static let heartbeatEvery: Duration = .seconds(1)
    static let heartbeatWait: Duration = .seconds(2)

    /// Starts listening; returns once the first listener is in place (or throws when the
    /// server cannot be reached).
    func startListening() async throws {
        let ready = AsyncStream<Void>.makeStream()
        let task = Task {
            var announced = false
            while !Task.isCancelled {
                do {
                    let connection = try await pool.connectAlone(purpose: "listener")
                    StatementLimits.set(.init(deadline: Self.heartbeatWait), for: connection)
                    defer { StatementLimits.forget(connection) }
                    do {
                        try await connection.listen(on: Self.channel) { notifications in
                            if unreachable.withLock({ $0 }) != nil {
                                unreachable.withLock { $0 = nil }
                                await pool.dropIdle()
                                logger.notice("the shared catalogue at \(location) is reachable again")
                                announce.yield(.reconnected)
                            }
                            if !announced {
                                announced = true
                                ready.continuation.finish()
                            }
                            // What was missed while no listener was there.
                            await catchUp()
                            let heartbeat = Task { await self.beat(on: connection) }
                            defer { heartbeat.cancel() }
                            for try await _ in notifications { await catchUp() }
                        }
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                    try? await connection.close()
                    if !Task.isCancelled { markUnreachable("the server closed the connection") }
                } catch {
                    if Task.isCancelled { break }
                    markUnreachable(PostgresFailure.describe(error))
                    if !announced {
                        announced = true
                        ready.continuation.finish()
                    }
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        listener.withLock { $0 = task }
        for await _ in ready.stream {}
        if let reason = unreachable.withLock({ $0 }) { throw StorageUnavailable("the shared catalogue at \(location) is unreachable: \(reason)") }
    }

    /// Asks the server on the listening connection every `heartbeatEvery`; when it does not
    /// answer within `heartbeatWait`, marks the catalogue unreachable and closes the
    /// connection, which ends the listener's wait and has it connect again. An answer
    /// clears an unreachable mark another connection set, and a change left to tell is
    /// read again.
    private func beat(on connection: PostgresConnection) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.heartbeatEvery)
            if Task.isCancelled { return }
            do {
                try await connection.run("SELECT 1", logger)
            } catch {
                if Task.isCancelled { return }
                markUnreachable(PostgresFailure.describe(error))
                // Calls waiting on the lost path fail now, not at their deadline.
                await pool.dropAll()
                try? await connection.close()
                return
            }
            if unreachable.withLock({ $0 }) != nil {
                // The server answers: what failed was a pooled connection's path alone.
                unreachable.withLock { $0 = nil }
                await pool.dropAll()
                logger.notice("the shared catalogue at \(location) answers again")
                announce.yield(.reconnected)
            }
            if changes.withLock({ $0.pending }) { await catchUp() }
        }
    }

    func markUnreachable(_ reason: String) {
        let first = unreachable.withLock { state -> Bool in
            defer { state = reason }
            return state == nil
        }
        if first { logger.warning("the shared catalogue at \(location) is unreachable (\(reason)); calls fail until it is back") }
    }

    /// The log's present end: below the oldest transaction running now, and the changes of
    /// transactions from there on already visible.
    func presentEnd() async throws -> ChangeCursor {
        try await transaction(readOnly: true) { connection in
            let bound = try await connection.values("SELECT pg_snapshot_xmin(pg_current_snapshot())::text", String.self, self.logger)
                .first.flatMap(UInt64.init) ?? 0
            let known = try await connection.values("""
                SELECT seq FROM piece_change WHERE tx >= pg_snapshot_xmin(pg_current_snapshot())
                """, Int64.self, self.logger)
            return ChangeCursor(tx: bound > 0 ? bound - 1 : 0, seq: .max, known: Set(known))
        }
    }

    /// How many changes one reading of the log takes at most.
    static let changesPerRead = 500

    /// Reads the log as `readChanges` does; one reading at a time (a call while one runs
    /// has it read once more when it is done).
    func catchUp() async {
        let first = changes.withLock { state -> Bool in
            if state.reading {
                state.readAgain = true
                return false
            }
            state.reading = true
            return true
        }
        guard first else { return }
        while true {
            await readChanges()
            let again = changes.withLock { state -> Bool in
                if state.readAgain {
                    state.readAgain = false
                    return true
                }
                state.reading = false
                return false
            }
            if !again { return }
        }
    }

    /// Announces, in order and once each, the changes of other hosts after this host's
    /// place in the log: a drop as the piece is now (none when it is gone since), a
    /// deletion by its id; and, when the log no longer keeps some of them (the host was
    /// away longer than `changeLogKept`), `changesMissed` first. The place moves past a
    /// change only once it has been passed on.
    private func readChanges() async {
        // Where this reading has got to (past the place, over changes told before), and
        // whether every change up to there is final (the place may follow it).
        var from: (tx: UInt64, seq: Int64)?
        var settled = true
        while true {
            let place = changes.withLock { $0 }
            let start = from ?? (place.tx, place.seq)
            let read: (horizon: (tx: UInt64, seq: Int64), final: UInt64, rows: [(UInt64, Int64, String, String, String)])
            do {
                read = try await transaction(readOnly: true) { connection in
                    var horizon: (tx: UInt64, seq: Int64) = (0, 0)
                    for row in try await connection.rows("SELECT tx::text, seq FROM piece_change_horizon", self.logger) {
                        let (tx, seq) = try row.decode((String, Int64).self)
                        horizon = (UInt64(tx) ?? 0, seq)
                    }
                    // Below this transaction every change is committed or never will be.
                    let final = try await connection.values("SELECT pg_snapshot_xmin(pg_current_snapshot())::text", String.self, self.logger)
                        .first.flatMap(UInt64.init) ?? 0
                    let rows = try await connection.rows("""
                        SELECT tx::text, seq, kind, piece_id, instance FROM piece_change
                        WHERE (tx, seq) > (\(String(start.tx))::xid8, \(start.seq))
                        ORDER BY tx, seq LIMIT \(Self.changesPerRead)
                        """, self.logger).map { row in
                        let (tx, seq, kind, id, instance) = try row.decode((String, Int64, String, String, String).self)
                        return (UInt64(tx) ?? 0, seq, kind, id, instance)
                    }
                    return (horizon, final, rows)
                }
            } catch {
                logger.warning("cannot read the catalogue's changes: \(error)")
                changes.withLock { $0.pending = true }
                return
            }
            if place < read.horizon {
                logger.warning("this host was away longer than the catalogue keeps its changes (\(Self.changeLogKept)): some drops and deletions were not announced")
                announce.yield(.changesMissed)
                changes.withLock { $0.tx = read.horizon.tx; $0.seq = read.horizon.seq }
                continue
            }
            // Each change is passed on as soon as it is seen. The place moves past it only
            // while every change before it is final (its transaction below `final`); past a
            // change of a transaction that may still be followed by one committing later behind
            // it, the change is remembered as told (`known`) instead, and passed over when read again.
            for (tx, seq, kind, id, instance) in read.rows {
                from = (tx, seq)
                let told = changes.withLock { $0.known.contains(seq) }
                if !told, instance != self.instance {
                    switch kind {
                    case "d":
                        let piece: StoredPiece?
                        do {
                            piece = try await self.piece(id)
                        } catch {
                            // Told later, when it can be read: the place stays before it.
                            logger.warning("cannot read piece \(id) that another host dropped (told once it can be read): \(error)")
                            changes.withLock { $0.pending = true }
                            return
                        }
                        if let piece { announce.yield(.dropped(piece)) }
                    case "x":
                        announce.yield(.deleted(id: id))
                    default:
                        break
                    }
                }
                settled = settled && tx < read.final
                changes.withLock { state in
                    if settled {
                        state.tx = tx
                        state.seq = seq
                        state.known.remove(seq)
                    } else {
                        state.known.insert(seq)
                    }
                }
            }
            changes.withLock { $0.pending = false }
            if read.rows.count < Self.changesPerRead { return }
        }
    }
}
