import Logging
import PieceStore
import PostgresNIO

/// A few connections to the catalogue's server, opened when needed and reused. A
/// connection that met a connection error is closed and replaced by the next request, so
/// the pool recovers by itself when the server comes back.
actor PostgresConnections {
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let limit: Int
    private var idle: [PostgresConnection] = []
    private var opened = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var nextID = 1
    private var closed = false

    init(_ catalogue: SharedCatalogueConfiguration, limit: Int, logger: Logger) {
        var configuration = PostgresConnection.Configuration(host: catalogue.host, port: catalogue.port, username: catalogue.user,
                                                             password: catalogue.password, database: catalogue.database, tls: .disable)
        configuration.options.connectTimeout = .seconds(3)
        self.configuration = configuration
        self.limit = limit
        self.logger = logger
    }

    /// A new connection outside the pool (for listening), closed by its user.
    func connectAlone() async throws -> PostgresConnection {
        let id = nextID
        nextID += 1
        return try await PostgresConnection.connect(configuration: configuration, id: id, logger: logger)
    }

    func lease() async throws -> PostgresConnection {
        while true {
            guard !closed else { throw StorageUnavailable("the shared catalogue is closing") }
            while let connection = idle.popLast() {
                if !connection.isClosed { return connection }
                opened -= 1
            }
            if opened < limit {
                opened += 1
                do {
                    return try await connectAlone()
                } catch {
                    opened -= 1
                    wakeOne()
                    throw error
                }
            }
            await withCheckedContinuation { waiting.append($0) }
        }
    }

    func release(_ connection: PostgresConnection, reusable: Bool) async {
        if reusable, !closed, !connection.isClosed {
            idle.append(connection)
        } else {
            opened -= 1
            try? await connection.close()
        }
        wakeOne()
    }

    /// Closes the idle connections (after the server went away they are dead anyway).
    func dropIdle() async {
        let dead = idle
        idle.removeAll()
        opened -= dead.count
        for connection in dead { try? await connection.close() }
        wakeOne()
    }

    func close() async {
        closed = true
        await dropIdle()
        waiting.forEach { $0.resume() }
        waiting.removeAll()
    }

    private func wakeOne() {
        if !waiting.isEmpty { waiting.removeFirst().resume() }
    }
}
