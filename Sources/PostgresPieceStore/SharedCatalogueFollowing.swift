import Logging
import PieceStore
import PostgresNIO

/// Following other hosts' changes, and knowing whether the server can be reached.
///
/// A connection of its own listens (`LISTEN`) for the numbers of new changes; each one, and
/// every reconnection, makes the host read the change log from the last change it
/// announced, in order, so that a drop or deletion made while this host was cut off is
/// announced once it is back, once. A heartbeat on the same connection notices a path that
/// drops everything silently (no reset ever comes) within 3 s: the catalogue is then
/// unreachable, the calls waiting on it and those that come fail at once, and the listener
/// connects again until the server answers.
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
                    let connection = try await pool.connectAlone()
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
    /// connection, which ends the listener's wait and has it connect again.
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
        }
    }

    func markUnreachable(_ reason: String) {
        let first = unreachable.withLock { state -> Bool in
            defer { state = reason }
            return state == nil
        }
        if first { logger.warning("the shared catalogue at \(location) is unreachable (\(reason)); calls fail until it is back") }
    }

    /// Announces, in order and once each, the changes of other hosts logged after the
    /// last one announced: a drop as the piece is now (none when it is gone since), a
    /// deletion by its id.
    func catchUp() async {
        let since = lastChange.withLock { $0 }
        let changes: [(Int64, String, String, String)]
        do {
            changes = try await transaction(readOnly: true) { connection in
                try await connection.rows("""
                    SELECT seq, kind, piece_id, instance FROM piece_change WHERE seq > \(since) ORDER BY seq
                    """, self.logger).map { try $0.decode((Int64, String, String, String).self) }
            }
        } catch {
            logger.warning("cannot read the catalogue's changes after \(since): \(error)")
            return
        }
        for (sequence, kind, id, instance) in changes {
            let fresh = lastChange.withLock { last -> Bool in
                defer { last = max(last, sequence) }
                return sequence > last
            }
            guard fresh, instance != self.instance else { continue }
            switch kind {
            case "d":
                do {
                    if let piece = try await piece(id) { announce.yield(.dropped(piece)) }
                } catch {
                    logger.warning("cannot read piece \(id) that another host dropped: \(error)")
                }
            case "x":
                announce.yield(.deleted(id: id))
            default:
                break
            }
        }
    }
}
