import Glibc
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PieceStore
import PostgresNIO

/// A few connections to the catalogue's server, opened when needed and reused. A
/// connection that met a connection error is closed and replaced by the next request, so
/// the pool recovers by itself when the server comes back.
///
/// Every connection's socket sends TCP keepalives (`keepalive`), and asks the server to
/// send its own (`SharedCatalogueAccess.sessionSettings`): a path that goes silent is
/// found dead by both ends within about seven seconds (a statement or a message left half
/// sent included, which no timeout of the server's ends). Idle
/// connections are also asked a `SELECT 1` every `idleCheck`, and closed when they do not
/// answer. PostgresNIO's own pool (`PostgresClient`) keeps idle connections alive too, but
/// opens its sockets itself, with no way to set socket options: so this pool is kept.
actor PostgresConnections {
    private let catalogue: SharedCatalogueConfiguration
    private let tls: PostgresConnection.Configuration.TLS
    private let startupParameters: [(String, String)]
    private let logger: Logger
    private let limit: Int
    private var idle: [(connection: PostgresConnection, since: ContinuousClock.Instant)] = []
    /// The connections lent out now, by id.
    private var leased: [Int: PostgresConnection] = [:]
    private var opened = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private var nextID = 1
    private var closed = false
    private var idleChecks: Task<Void, Never>?

    /// TCP keepalive on every socket: the first probe after `idle` seconds of silence,
    /// then every `interval`, the connection given up after `count` unanswered.
    static let keepalive = (idle: 4, interval: 1, count: 3)
    /// How long a connection may stay idle before it is asked whether it still answers.
    static let idleCheck: Duration = .seconds(10)

    /// Whether the catalogue knows the path to the server lost (its pooled connections'
    /// statements then stop waiting).
    private let pathLost: @Sendable () -> Bool

    init(_ catalogue: SharedCatalogueConfiguration, limit: Int, logger: Logger, instance: String = "",
         pathLost: @escaping @Sendable () -> Bool = { false }) throws {
        self.pathLost = pathLost
        self.catalogue = catalogue
        tls = try Self.tls(catalogue)
        // The server's limits for this session (also the host role's own settings), and this
        // process among the catalogue's users, which the change log records.
        startupParameters = SharedCatalogueAccess.sessionSettings + [("earshot.instance", instance)]
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
        // As libpq: `require` with authorities named checks the certificate against them.
        case .require: tls.certificateVerification = catalogue.sslRootCertificate == nil ? .none : .noHostnameVerification
        case .disable: tls.certificateVerification = .none
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

    /// A new connection outside the pool (for listening), closed by its user: a socket of
    /// this pool's (with keepalive), then PostgreSQL's handshake on it. `purpose` is in its
    /// `application_name` (`earshot-pieces pool`, `earshot-pieces listener`: what
    /// `pg_stat_activity` shows of it).
    func connectAlone(purpose: String = "pool") async throws -> PostgresConnection {
        let id = nextID
        nextID += 1
        let channel = try await Self.socket(host: catalogue.host, port: catalogue.port)
        var configuration = PostgresConnection.Configuration(establishedChannel: channel, tls: tls, username: catalogue.user,
                                                             password: catalogue.password, database: catalogue.database)
        configuration.options.connectTimeout = .seconds(3)
        // The name the certificate must bear (an address is checked against its IP names).
        if !SharedCatalogueConfiguration.isAddress(catalogue.host) { configuration.options.tlsServerName = catalogue.host }
        configuration.options.additionalStartupParameters = startupParameters + [("application_name", "earshot-pieces \(purpose)")]
        do {
            // On the socket's own event loop: PostgresNIO sets its handlers up there.
            return try await PostgresConnection.connect(on: channel.eventLoop, configuration: configuration, id: id, logger: logger).get()
        } catch {
            _ = try? await channel.close()
            throw error
        }
    }

    /// A TCP connection to the server with keepalive on (`keepalive`).
    static func socket(host: String, port: Int) async throws -> any Channel {
        let tcp = SocketOptionLevel(IPPROTO_TCP)
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(3))
            .channelOption(ChannelOptions.socketOption(.so_keepalive), value: 1)
            .channelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .channelOption(ChannelOptions.socket(tcp, SocketOptionName(TCP_KEEPIDLE)), value: SocketOptionValue(keepalive.idle))
            .channelOption(ChannelOptions.socket(tcp, SocketOptionName(TCP_KEEPINTVL)), value: SocketOptionValue(keepalive.interval))
            .channelOption(ChannelOptions.socket(tcp, SocketOptionName(TCP_KEEPCNT)), value: SocketOptionValue(keepalive.count))
        return try await bootstrap.connect(host: host, port: port).get()
    }

    func lease() async throws -> PostgresConnection {
        if idleChecks == nil, !closed { startIdleChecks() }
        while true {
            guard !closed else { throw StorageUnavailable("the shared catalogue is closing") }
            while let connection = idle.popLast()?.connection {
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
            idle.append((connection, .now))
        } else {
            opened -= 1
            StatementLimits.forget(connection)
            try? await connection.close()
        }
        wakeOne()
    }

    /// Asks every connection idle for `idleCheck` or longer whether it still answers, every
    /// `idleCheck`; one that does not within two seconds is closed (the next request opens
    /// another).
    private func startIdleChecks() {
        idleChecks = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.idleCheck)
                guard let self else { return }
                await self.checkIdle()
            }
        }
    }

    private func checkIdle() async {
        let due = idle.filter { $0.since.duration(to: .now) >= Self.idleCheck }.map(\.connection)
        idle.removeAll { entry in due.contains { $0 === entry.connection } }
        for connection in due {
            leased[connection.id] = connection
            StatementLimits.set(.init(deadline: .seconds(2), pathLost: pathLost), for: connection)
            let answers = (try? await connection.run("SELECT 1", logger)) != nil
            StatementLimits.set(.init(pathLost: pathLost), for: connection)
            if !answers { logger.info("a pooled connection to the catalogue did not answer while idle: closed") }
            await release(connection, reusable: answers)
        }
    }

    /// Closes the idle connections (after the server went away they are dead anyway).
    func dropIdle() async {
        let dead = idle.map(\.connection)
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
        idleChecks?.cancel()
        await dropIdle()
        waiting.forEach { $0.resume() }
        waiting.removeAll()
    }

    private func wakeOne() {
        if !waiting.isEmpty { waiting.removeFirst().resume() }
    }
}
