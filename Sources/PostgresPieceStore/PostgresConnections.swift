import Logging
import NIOSSL
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
    /// The connections lent out now, by id.
    private var leased: [Int: PostgresConnection] = [:]
    private var opened = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var nextID = 1
    private var closed = false

    /// Whether the catalogue knows the path to the server lost (its pooled connections'
    /// statements then stop waiting).
    private let pathLost: @Sendable () -> Bool

    init(_ catalogue: SharedCatalogueConfiguration, limit: Int, logger: Logger,
         pathLost: @escaping @Sendable () -> Bool = { false }) throws {
        self.pathLost = pathLost
        var configuration = PostgresConnection.Configuration(host: catalogue.host, port: catalogue.port, username: catalogue.user,
                                                             password: catalogue.password, database: catalogue.database,
                                                             tls: try Self.tls(catalogue))
        configuration.options.connectTimeout = .seconds(3)
        // A statement the server has been at for this long is given up by the server too.
        configuration.options.additionalStartupParameters = [("statement_timeout", "15s")]
        self.configuration = configuration
        self.limit = limit
        self.logger = logger
    }

    /// TLS as the configuration's `sslmode` asks: none; required but unchecked; the server's
    /// certificate checked against `sslrootcert` (or the system's authorities); and its
    /// name checked against the host's.
    static func tls(_ catalogue: SharedCatalogueConfiguration) throws -> PostgresConnection.Configuration.TLS {
        guard catalogue.sslMode != .disable else { return .disable }
        var tls = TLSConfiguration.makeClientConfiguration()
        switch catalogue.sslMode {
        case .disable, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        if let file = catalogue.sslRootCertificate { tls.trustRoots = .file(file) }
        do {
            return .require(try NIOSSLContext(configuration: tls))
        } catch {
            throw StoreFailure("sslrootcert=\(catalogue.sslRootCertificate ?? "(the system's)"): cannot be used: \(error)")
        }
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
                if !connection.isClosed {
                    leased[connection.id] = connection
                    return connection
                }
                StatementLimits.forget(connection)
                opened -= 1
            }
            if opened < limit {
                opened += 1
                do {
                    let connection = try await connectAlone()
                    StatementLimits.set(.init(pathLost: pathLost), for: connection)
                    leased[connection.id] = connection
                    return connection
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
        leased.removeValue(forKey: connection.id)
        if reusable, !closed, !connection.isClosed {
            idle.append(connection)
        } else {
            opened -= 1
            StatementLimits.forget(connection)
            try? await connection.close()
        }
        wakeOne()
    }

    /// Closes the idle connections (after the server went away they are dead anyway).
    func dropIdle() async {
        let dead = idle
        idle.removeAll()
        opened -= dead.count
        for connection in dead {
            StatementLimits.forget(connection)
            try? await connection.close()
        }
        wakeOne()
    }

    /// Closes every connection, the idle ones and those lent out (whose statements then
    /// fail at once): the path to the server is gone.
    func dropAll() async {
        for connection in leased.values { try? await connection.close() }
        await dropIdle()
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
