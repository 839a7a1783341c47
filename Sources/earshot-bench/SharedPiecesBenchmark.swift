import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc

/// `earshot-bench pieces --database …`: the piece store on a shared PostgreSQL catalogue,
/// next to the private SQLite store in the same run.
struct SharedPiecesBenchmark: Sendable {
    /// A postgresql:// URL, or `local` for a throwaway server started here.
    let database: String
    let drops: Int
    let pieces: Int
    let lists: Int
    let seconds: Int

    static let busName = PiecesBenchmark.busName

    /// One earshot-pieces on a private bus of its own, as on a host of its own.
    struct Host {
        let bus: PrivateBus
        let service: ServiceProcess
        let client: DBusConnection
        /// The store through EarshotClient, on `client`.
        let pieces: PiecesProxy

        static func start(_ executable: String, arguments: [String]) async throws -> Host {
            let bus = try await PrivateBus.start()
            let service = try await ServiceProcess(executable, arguments: ["--data-dir", bus.directory.path + "/pieces"] + arguments,
                                                   bus: bus, busName: SharedPiecesBenchmark.busName)
            let client = try await bus.connect()
            return Host(bus: bus, service: service, client: client, pieces: Earshot(connection: client).pieces)
        }

        func stop() async {
            client.close()
            await service.shutdown()
            await bus.shutdown()
        }

        /// Drops the piece titled `title` with the mix stem at `mixStemPath`, through `other`
        /// (another connection's client) or this host's client; returns its id.
        @discardableResult
        func drop(_ title: String, mixStemPath: String, on other: Earshot? = nil) async throws -> String {
            try await (other?.pieces ?? pieces).drop(PieceDrop(title: title, mixStemPath: mixStemPath))
        }
    }

    /// A host of the catalogue at `url` (the administrator's): a role `name` of its own made
    /// by `earshot-pieces add-host`, its password in `work`; the arguments it serves with,
    /// its URL routed through `route`.
    static func host(_ name: String, catalogue url: String, executable: String, work: URL,
                     route: (String) -> String = { $0 }) async throws -> [String] {
        let file = work.appendingPathComponent("\(name).password")
        _ = try await ToolRun.run([executable, "add-host", name, "--database", url, "--password-file", file.path])
        let components = URLComponents(string: url)
        let administrator = components?.user ?? ""
        let own = url.replacingOccurrences(of: "//\(administrator)@", with: "//\(name)@")
        return ["--database", route(own), "--database-password-file", file.path]
    }

    /// Host names not taken on the server yet (roles are the server's).
    static let fleet = "bench-" + UUID().uuidString.lowercased().prefix(6)

    func run() async throws -> SharedPiecesResults {
        let executable = try builtService("earshot-pieces")
        var server: PostgresTestServer?
        let url: (String) async throws -> String
        if database == "local" {
            progress("starting a throwaway PostgreSQL server (TLS too, with certificates made here)")
            let started = try await PostgresTestServer.startWithTLS()
            server = started
            url = { _ in try await started.createDatabase() }
        } else {
            url = { _ in database }
        }
        do {
            let results = try await measure(executable, database: url, server: server)
            await server?.remove()
            return results
        } catch {
            await server?.remove()
            throw error
        }
    }

    /// The same database over TLS, checked as on a fleet (`verify-full`, the server's own
    /// authority): on a local server only.
    static func overTLS(_ url: String, server: PostgresTestServer) -> String {
        url.replacingOccurrences(of: "@127.0.0.1:", with: "@localhost:")
            + "?sslmode=verify-full&sslrootcert=\(server.certificateAuthority)"
    }

    private func measure(_ executable: String, database: (String) async throws -> String,
                         server: PostgresTestServer?) async throws -> SharedPiecesResults {
        let shared = try await database("drops")
        let secured = server.map { Self.overTLS(shared, server: $0) }
        let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("earshot-bench-shared-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }

        // 1. The 10 MiB drop, on SQLite, on PostgreSQL and on PostgreSQL over TLS, in turn.
        progress("\(drops) drops of a 10 MiB WAV on each catalogue")
        let local = try await Host.start(executable, arguments: [])
        let hostA = try await Self.host("\(Self.fleet)-a", catalogue: shared, executable: executable, work: work)
        let first = try await Host.start(executable, arguments: hostA)
        var firstTLS: Host?
        if let server, secured != nil {
            firstTLS = try await Host.start(executable, arguments: hostA.map { $0.hasPrefix("postgresql://") ? Self.overTLS($0, server: server) : $0 })
        }
        var times: [[Double]] = [[], [], []]
        for run in 0...drops {
            for (target, host) in ([local, first, firstTLS] as [Host?]).enumerated() {
                guard let host else { continue }
                // Bytes of its own for each: the same bytes twice would be stored once.
                let file = work.appendingPathComponent("drop-\(run)-\(target).wav")
                try PiecesBenchmark.writeWAV(file, dataBytes: 10 * 1024 * 1024 - 44, seed: run * 3 + target + 1)
                let start = monotonicNanoseconds()
                try await host.drop("Drop \(run)", mixStemPath: file.path)
                if run > 0 { times[target].append(Double(monotonicNanoseconds() - start) / 1e6) }
                unlink(file.path)
            }
        }
        await local.stop()

        // 2. From a drop on one host to PieceDropped on another (over TLS when it can).
        let hostB = try await Self.host("\(Self.fleet)-b", catalogue: shared, executable: executable, work: work)
        let second = try await Host.start(executable, arguments: hostB)
        let third = try await Host.start(executable, arguments: try await Self.host("\(Self.fleet)-c", catalogue: shared,
                                                                                    executable: executable, work: work))
        var secondTLS: Host?
        if let server, secured != nil {
            secondTLS = try await Host.start(executable, arguments: hostB.map { $0.hasPrefix("postgresql://") ? Self.overTLS($0, server: server) : $0 })
        }
        let hosts = [first, second, third]
        let small = work.appendingPathComponent("small.wav")
        try PiecesBenchmark.writeWAV(small, dataBytes: 44100 * 4, seed: 7)
        let (dropper, watcher) = (firstTLS ?? first, secondTLS ?? second)
        progress("100 drops on one host, each until another host announces it\(secured == nil ? "" : " (TLS)")")
        // The watcher's changes as EarshotClient's `PiecesProxy.changes()` yields them.
        let changes = DatedArrivals(try await PiecesProxy(connection: watcher.client).changes())
        var announced: [Double] = []
        for run in 0..<110 {
            let start = monotonicNanoseconds()
            let id = try await dropper.drop("Seen \(run)", mixStemPath: small.path)
            var arrival: UInt64?
            while arrival == nil {
                guard let next = await changes.next(within: .seconds(5)) else { throw BenchmarkError("\(id) was not announced as dropped") }
                if case .dropped(id, _) = next.element { arrival = next.arrivedNanoseconds }
            }
            if run >= 10 { announced.append(Double(arrival! - start) / 1e6) }
        }
        await firstTLS?.stop()
        await secondTLS?.stop()

        // 2b. A path that drops everything silently: until calls fail, and until they work again.
        var silent: (failed: [Double], recovered: [Double]) = ([], [])
        if let server {
            progress("5 silent cuts of one host's path to the server")
            silent = try await Self.silentCuts(executable, url: shared, server: server, work: work)
        }

        // 2c. A fleet's drops on the write path as it is and as it was, in turn; and drops
        // while another host is silent in the middle of its own.
        progress("drops from three hosts at once, 4 clients each, on the current write path and on the earlier one")
        let current = try await fleetDrops(executable, database: database, work: work, earlier: false)
        let earlier = try await fleetDrops(executable, database: database, work: work, earlier: true)
        var waits: (same: [Double], other: [Double]) = ([], [])
        if let server {
            progress("5 drops while another host is silent in the middle of its own")
            waits = try await Self.silentWriter(executable, url: try await database("silent"), server: server, work: work)
        }

        // 3. Drops per second from three hosts at once, four clients each.
        progress("\(seconds) s of drops from three hosts at once, four clients each")
        let counted = try await withThrowingTaskGroup(of: Int.self) { group in
            let deadline = ContinuousClock.now + .seconds(seconds)
            for host in hosts {
                for client in 0..<4 {
                    group.addTask {
                        let connection = try await host.bus.connect()
                        defer { connection.close() }
                        let earshot = Earshot(connection: connection)
                        var count = 0
                        while ContinuousClock.now < deadline {
                            try await host.drop("Load \(client) \(count)", mixStemPath: small.path, on: earshot)
                            count += 1
                        }
                        return count
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        for host in hosts { await host.stop() }

        // 4. List over many pieces, in a database of their own.
        let big = try await database("list")
        progress("filling the shared catalogue with \(pieces) pieces (server-side)")
        let fillStart = monotonicNanoseconds()
        let filler = try await Self.fill(big, pieces: pieces, executable: executable, work: work)
        let fill = Double(monotonicNanoseconds() - fillStart) / 1e9
        let lister = try await Host.start(executable, arguments: filler)
        var lists: [SharedPiecesResults.ListFigures] = []
        for kind in ListKind.allCases {
            progress("\(self.lists) List calls over \(pieces) pieces: \(kind.rawValue)")
            lists.append(.init(filter: kind.rawValue, figures: Figures(try await listTimes(lister.pieces, kind: kind))))
        }
        await lister.stop()
        return SharedPiecesResults(processors: ProcessInfo.processInfo.activeProcessorCount,
                                   dropSQLite: Figures(times[0]), dropPostgres: Figures(times[1]),
                                   dropPostgresTLS: times[2].isEmpty ? nil : Figures(times[2]), announced: Figures(announced),
                                   announcedOverTLS: secured != nil, silentFailure: Figures(silent.failed),
                                   silentRecovery: Figures(silent.recovered),
                                   fleetDrop: Figures(current), fleetDropEarlier: Figures(earlier),
                                   silentWaitSame: Figures(waits.same), silentWaitOther: Figures(waits.other),
                                   dropsPerSecond: Double(counted) / Double(seconds), pieces: pieces, fillSeconds: fill, lists: lists)
    }

    /// What a `List` filters on, as users browse.
    enum ListKind: String, CaseIterable {
        case everything = "no filter, newest first"
        case author = "one author"
        case title = "title text"
        case created = "created within an hour"
        case tonality = "tonality alone"
        case tempoAndTonality = "tempo range + tonality"

        func query(_ generator: inout SeededGenerator, pieces: Int) -> EarshotClient.PieceQuery {
            var query = EarshotClient.PieceQuery()
            query.limit = 50
            query.descending = true
            let tonality = [PieceTonality.unknown, .atonal, .tonal][Int(generator.next() % 3)]
            switch self {
            case .everything:
                break
            case .author:
                query.author = "user\(generator.next() % 1000)@\(SharedPiecesBenchmark.fleet)-filler"
            case .title:
                query.titleContains = "Piece \(1 + generator.next() % UInt64(max(1, pieces - 1)))"
            case .created:
                let second = Int(generator.next() % UInt64(max(1, pieces - 3600)))
                let start = Date(timeIntervalSince1970: 1_735_689_600 + Double(second))  // 2025-01-01 + i s, as filled
                query.createdAfter = Self.stamp(start)
                query.createdBefore = Self.stamp(start.addingTimeInterval(3600))
            case .tonality:
                query.tonality = tonality
            case .tempoAndTonality:
                let low = 40 + Double(generator.next() % 160)
                query.tempoMin = low
                query.tempoMax = low + 20
                query.tonality = tonality
            }
            return query
        }

        static func stamp(_ date: Date) -> String {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter.string(from: date)
        }
    }

    /// `lists` List calls of `kind` (after 50 unmeasured), in milliseconds.
    func listTimes(_ store: PiecesProxy, kind: ListKind) async throws -> [Double] {
        var generator = SeededGenerator(seed: 20261128)
        var times: [Double] = []
        for index in 0..<(lists + 50) {
            let query = kind.query(&generator, pieces: pieces)
            let start = monotonicNanoseconds()
            _ = try await store.list(query)
            if index >= 50 { times.append(Double(monotonicNanoseconds() - start) / 1e6) }
        }
        return times
    }

    /// A host whose path to `server` goes through a relay, cut five times: the seconds from
    /// each cut until a call fails with StorageUnavailable, and from the path's return until
    /// a call succeeds.
    static func silentCuts(_ executable: String, url: String, server: PostgresTestServer, work: URL) async throws
        -> (failed: [Double], recovered: [Double]) {
        let relay = try TCPRelay(to: server.port)
        defer { relay.stop() }
        let host = try await Host.start(executable, arguments: try await Self.host("\(fleet)-cut", catalogue: url, executable: executable, work: work) {
            $0.replacingOccurrences(of: ":\(server.port)/", with: ":\(relay.port)/")
        })
        defer { Task { await host.stop() } }
        // Through EarshotClient with a 60 s limit: a call left hanging by a cut fails by the
        // service's own deadline, not the client's.
        func list() async -> Bool {
            (try? await PiecesProxy(connection: host.client, timeout: .seconds(60)).list()) != nil
        }
        var failed: [Double] = [], recovered: [Double] = []
        for _ in 0..<5 {
            try await Task.sleep(for: .seconds(1))
            guard await list() else { throw BenchmarkError("the host does not answer before the cut") }
            relay.cut()
            var start = monotonicNanoseconds()
            while await list() { try await Task.sleep(for: .milliseconds(50)) }
            failed.append(Double(monotonicNanoseconds() - start) / 1e9)
            try await Task.sleep(for: .seconds(1))
            relay.restore()
            start = monotonicNanoseconds()
            while !(await list()) { try await Task.sleep(for: .milliseconds(50)) }
            recovered.append(Double(monotonicNanoseconds() - start) / 1e9)
        }
        return (failed, recovered)
    }

    /// Fills the catalogue at `url` with `pieces` pieces: one real drop by the host
    /// `…-filler` (so that the mix stem is an object), then rows made by the server from
    /// `generate_series` as the administrator, all naming that mix stem and that host:
    /// random tempo 40–220 BPM, tonality, root and time signature, one second apart; then
    /// vacuumed and analysed. Returns the filler host's arguments.
    static func fill(_ url: String, pieces: Int, executable: String, work: URL) async throws -> [String] {
        let name = "\(fleet)-filler"
        let arguments = try await host(name, catalogue: url, executable: executable, work: work)
        let seed = try await Host.start(executable, arguments: arguments)
        let stem = work.appendingPathComponent("stem.wav")
        try PiecesBenchmark.writeWAV(stem, dataBytes: 44100 * 4, seed: 3)
        let id = try await seed.drop("Seed", mixStemPath: stem.path)
        await seed.stop()
        let sql = """
            BEGIN;
            INSERT INTO piece (id, title, description, length_us, tempo, ts_upper, ts_lower, tonality, scale_mask, root, listed,
                               author, author_user, author_uid, created_at, sample_rate, channels, loudness_lufs, true_peak_dbtp)
            SELECT 'fill-' || lpad(i::text, 8, '0'), 'Piece ' || i, '', 1000000,
                   CASE WHEN i % 10 = 0 THEN NULL ELSE 40 + random() * 180 END,
                   (ARRAY[2, 3, 4, 6])[1 + i % 4], 4,
                   (ARRAY['unknown', 'atonal', 'tonal'])[1 + i % 3],
                   CASE WHEN i % 3 = 2 THEN 2741 ELSE 0 END,
                   CASE WHEN i % 3 = 2 THEN (i % 12) ELSE NULL END,
                   i % 7 <> 0, 'user' || (i % 1000) || '@\(name)', 'user' || (i % 1000) || '@\(name)', 0,
                   to_char(timestamp '2025-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                   44100, 2, -14, -1
            FROM generate_series(1, \(pieces - 1)) AS i;
            INSERT INTO asset (piece_id, kind, format, hash, size, dropped)
            SELECT 'fill-' || lpad(i::text, 8, '0'), a.kind, a.format, a.hash, a.size, true
            FROM generate_series(1, \(pieces - 1)) AS i, asset a WHERE a.piece_id = '\(id)';
            COMMIT;
            """
        _ = try await ToolRun.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql], timeout: .seconds(1800))
        // As autovacuum would in time: statistics, and the visibility map that lets counting
        // read the indexes alone.
        _ = try await ToolRun.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", "VACUUM ANALYZE"], timeout: .seconds(1800))
        return arguments
    }
}

struct SharedPiecesResults: BenchmarkReport, Sendable {
    struct ListFigures: Encodable, Sendable {
        let filter: String
        let figures: Figures
    }

    let processors: Int
    let dropSQLite: Figures
    let dropPostgres: Figures
    let dropPostgresTLS: Figures?
    let announced: Figures
    let announcedOverTLS: Bool
    /// Seconds from a silent cut to StorageUnavailable, and from the path's return to an answer.
    let silentFailure: Figures
    let silentRecovery: Figures
    /// Drops from three hosts at once (ms): the write path as it is, and the earlier one
    /// (one advisory lock and one counter row for every writer).
    let fleetDrop: Figures
    let fleetDropEarlier: Figures
    /// Seconds from another host's silence mid-drop to a drop of the same audio, and of other audio.
    let silentWaitSame: Figures
    let silentWaitOther: Figures
    let dropsPerSecond: Double
    let pieces: Int
    let fillSeconds: Double
    let lists: [ListFigures]

    func table() -> String {
        let widths = [56, 8, 9, 9, 9, 9]
        var lines = [TableFormat.row(["", "samples", "p50", "p99", "mean", "max"], widths: widths)]
        func add(_ name: String, _ figures: Figures) {
            lines.append(TableFormat.row([name, String(figures.samples), TableFormat.fixed(figures.p50, 2), TableFormat.fixed(figures.p99, 2),
                                          TableFormat.fixed(figures.mean, 2), TableFormat.fixed(figures.max, 2)], widths: widths))
        }
        add("Drop 10 MiB WAV, private SQLite store (ms)", dropSQLite)
        add("Drop 10 MiB WAV, shared PostgreSQL catalogue (ms)", dropPostgres)
        if let dropPostgresTLS { add("Drop 10 MiB WAV, shared catalogue over TLS (ms)", dropPostgresTLS) }
        add("Drop on host A → \(PiecesContract.Manager.pieceDropped.name) on host B\(announcedOverTLS ? ", TLS" : "") (ms)", announced)
        if silentFailure.samples > 0 {
            add("Silent cut → \(EarshotErrorName.storageUnavailable.shortName) (s)", silentFailure)
            add("Path back → calls answered again (s)", silentRecovery)
        }
        add("Drop, 3 hosts × 4 clients at once, current write path (ms)", fleetDrop)
        add("Drop, 3 hosts × 4 clients at once, earlier write path (ms)", fleetDropEarlier)
        if silentWaitSame.samples > 0 {
            add("Another host silent mid-drop → drop of the same audio (s)", silentWaitSame)
            add("Another host silent mid-drop → drop of other audio (s)", silentWaitOther)
        }
        for list in lists { add("List over \(pieces) pieces, \(list.filter) (ms)", list.figures) }
        lines.append("drops from three hosts at once (4 clients each, 1 s WAV): \(TableFormat.fixed(dropsPerSecond, 1)) per second")
        lines.append("catalogue: \(pieces) pieces (server-side fill \(TableFormat.fixed(fillSeconds, 1)) s); \(processors) processors")
        lines.append("fleet drops, current / earlier write path: p50 \(TableFormat.fixed(fleetDrop.p50 / fleetDropEarlier.p50, 2))×, "
                     + "p99 \(TableFormat.fixed(fleetDrop.p99 / fleetDropEarlier.p99, 2))×")
        lines.append("drop on PostgreSQL / SQLite p50: \(TableFormat.fixed(dropPostgres.p50 / dropSQLite.p50, 2))×"
            + (dropPostgresTLS.map { "; over TLS / plain p50: \(TableFormat.fixed($0.p50 / dropPostgres.p50, 2))×" } ?? ""))
        let slow = lists.filter { !($0.figures.p50 < 10) }.map(\.filter)
        lines.append("goals: List p50 < 10 ms for every filter: " + (slow.isEmpty ? "met" : "NOT met (\(slow.joined(separator: ", ")))") + "; "
            + "drop → \(PiecesContract.Manager.pieceDropped.name) elsewhere p99 < 200 ms: \(TableFormat.fixed(announced.p99, 1)) ms \(announced.p99 < 200 ? "met" : "NOT met")"
            + (silentFailure.samples > 0 ? "; \(EarshotErrorName.storageUnavailable.shortName) within 5 s of a silent cut: "
               + "\(TableFormat.fixed(silentFailure.max, 2)) s at most \(silentFailure.max < 5 ? "met" : "NOT met")" : "")
            + (silentWaitSame.samples > 0 ? "; drops within 10 s of another host's silence mid-drop: "
               + "\(TableFormat.fixed(max(silentWaitSame.max, silentWaitOther.max), 2)) s at most "
               + (max(silentWaitSame.max, silentWaitOther.max) < 10 ? "met" : "NOT met") : ""))
        return lines.joined(separator: "\n")
    }
}
