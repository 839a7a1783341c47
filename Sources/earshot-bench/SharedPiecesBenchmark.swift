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
    static let path = PiecesBenchmark.path

    /// One earshot-pieces on a private bus of its own, as on a host of its own.
    struct Host {
        let bus: PrivateBus
        let service: ServiceProcess
        let client: DBusConnection

        static func start(_ executable: String, arguments: [String]) async throws -> Host {
            let bus = try await PrivateBus.start()
            let service = try await ServiceProcess(executable, arguments: ["--data-dir", bus.directory.path + "/pieces"] + arguments,
                                                   bus: bus, busName: SharedPiecesBenchmark.busName)
            return Host(bus: bus, service: service, client: try await bus.connect())
        }

        func stop() async {
            client.close()
            await service.shutdown()
            await bus.shutdown()
        }

        @discardableResult
        func drop(_ request: [String: DBusValue], on connection: DBusConnection? = nil) async throws -> String {
            let reply = try await (connection ?? client).call(destination: SharedPiecesBenchmark.busName, path: SharedPiecesBenchmark.path,
                                                              interface: SharedPiecesBenchmark.busName, member: PiecesContract.Manager.drop.name,
                                                              [.vardict(request)], timeout: .seconds(120))
            guard let id = reply.first?.stringValue else { throw BenchmarkError("Drop replied \(reply)") }
            return id
        }
    }

    func run() async throws -> SharedPiecesResults {
        let executable = try builtService("earshot-pieces")
        var server: PostgresTestServer?
        let url: (String) async throws -> String
        if database == "local" {
            progress("starting a throwaway PostgreSQL server")
            let started = try await PostgresTestServer.start()
            server = started
            url = { _ in try await started.createDatabase() }
        } else {
            url = { _ in database }
        }
        do {
            let results = try await measure(executable, database: url)
            await server?.remove()
            return results
        } catch {
            await server?.remove()
            throw error
        }
    }

    private func measure(_ executable: String, database: (String) async throws -> String) async throws -> SharedPiecesResults {
        let shared = try await database("drops")
        let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("earshot-bench-shared-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }

        // 1. The 10 MiB drop, on SQLite and on PostgreSQL, alternating.
        progress("\(drops) drops of a 10 MiB WAV on each catalogue")
        let local = try await Host.start(executable, arguments: [])
        let first = try await Host.start(executable, arguments: ["--database", shared, "--host-name", "host-a"])
        var sqlite: [Double] = [], postgres: [Double] = []
        for run in 0...drops {
            let file = work.appendingPathComponent("drop-\(run).wav")
            try PiecesBenchmark.writeWAV(file, dataBytes: 10 * 1024 * 1024 - 44, seed: run + 1)
            for (host, target) in [(local, 0), (first, 1)] {
                let start = monotonicNanoseconds()
                try await host.drop(["Title": .string("Drop \(run)"), "MixStemPath": .string(file.path)])
                let elapsed = Double(monotonicNanoseconds() - start) / 1e6
                if run > 0 { target == 0 ? sqlite.append(elapsed) : postgres.append(elapsed) }
            }
            unlink(file.path)
        }
        await local.stop()

        // 2. From a drop on one host to PieceDropped on another.
        let second = try await Host.start(executable, arguments: ["--database", shared, "--host-name", "host-b"])
        let third = try await Host.start(executable, arguments: ["--database", shared, "--host-name", "host-c"])
        let hosts = [first, second, third]
        let small = work.appendingPathComponent("small.wav")
        try PiecesBenchmark.writeWAV(small, dataBytes: 44100 * 4, seed: 7)
        progress("100 drops on one host, each until another host announces it")
        let signals = try await second.client.subscribe(MatchRule(sender: Self.busName, interface: Self.busName, member: PiecesContract.Manager.pieceDropped.name))
        var announced: [Double] = []
        for run in 0..<110 {
            let start = monotonicNanoseconds()
            let id = try await first.drop(["Title": .string("Seen \(run)"), "MixStemPath": .string(small.path)])
            var arrival: UInt64?
            while arrival == nil {
                guard let message = await signals.next(timeout: .seconds(5)) else { throw BenchmarkError("no PieceDropped for \(id)") }
                if message.body.first?.stringValue == id { arrival = monotonicNanoseconds() }
            }
            if run >= 10 { announced.append(Double(arrival! - start) / 1e6) }
        }
        signals.cancel()

        // 3. Drops per second from three hosts at once, four clients each.
        progress("\(seconds) s of drops from three hosts at once, four clients each")
        let counted = try await withThrowingTaskGroup(of: Int.self) { group in
            let deadline = ContinuousClock.now + .seconds(seconds)
            for host in hosts {
                for client in 0..<4 {
                    group.addTask {
                        let connection = try await host.bus.connect()
                        defer { connection.close() }
                        var count = 0
                        while ContinuousClock.now < deadline {
                            try await host.drop(["Title": .string("Load \(client) \(count)"), "MixStemPath": .string(small.path)], on: connection)
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
        try await Self.fill(big, pieces: pieces, executable: executable, work: work)
        let fill = Double(monotonicNanoseconds() - fillStart) / 1e9
        let lister = try await Host.start(executable, arguments: ["--database", big, "--host-name", "host-a"])
        let listTimes = try await PiecesBenchmark.listTimes(lister.client, lists: lists, over: pieces, seed: 20261123)
        await lister.stop()
        return SharedPiecesResults(processors: ProcessInfo.processInfo.activeProcessorCount,
                                   dropSQLite: Figures(sqlite), dropPostgres: Figures(postgres), announced: Figures(announced),
                                   dropsPerSecond: Double(counted) / Double(seconds), pieces: pieces, fillSeconds: fill,
                                   list: Figures(listTimes))
    }

    /// Fills the catalogue at `url` with `pieces` pieces: one real drop (so that the schema
    /// exists and the mix stem is an object), then rows made by the server from
    /// `generate_series`, all naming that mix stem: random tempo 40–220 BPM, tonality, root
    /// and time signature, one second apart; then vacuumed and analysed.
    static func fill(_ url: String, pieces: Int, executable: String, work: URL) async throws {
        let seed = try await Host.start(executable, arguments: ["--database", url, "--host-name", "filler"])
        let stem = work.appendingPathComponent("stem.wav")
        try PiecesBenchmark.writeWAV(stem, dataBytes: 44100 * 4, seed: 3)
        let id = try await seed.drop(["Title": .string("Seed"), "MixStemPath": .string(stem.path)])
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
                   i % 7 <> 0, 'filler@filler', 'filler@filler', 0,
                   to_char(timestamp '2025-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                   44100, 2, -14, -1
            FROM generate_series(1, \(pieces - 1)) AS i;
            INSERT INTO asset (piece_id, kind, format, hash, size, dropped)
            SELECT 'fill-' || lpad(i::text, 8, '0'), a.kind, a.format, a.hash, a.size, true
            FROM generate_series(1, \(pieces - 1)) AS i, asset a WHERE a.piece_id = '\(id)';
            UPDATE piece_count SET n = (SELECT count(*) FROM piece);
            COMMIT;
            """
        _ = try await ToolRun.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql], timeout: .seconds(1800))
        // As autovacuum would in time: statistics, and the visibility map that lets counting
        // read the indexes alone.
        _ = try await ToolRun.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", "VACUUM ANALYZE"], timeout: .seconds(1800))
    }
}

struct SharedPiecesResults: BenchmarkReport, Sendable {
    let processors: Int
    let dropSQLite: Figures
    let dropPostgres: Figures
    let announced: Figures
    let dropsPerSecond: Double
    let pieces: Int
    let fillSeconds: Double
    let list: Figures

    func table() -> String {
        let widths = [52, 8, 9, 9, 9, 9]
        var lines = [TableFormat.row(["", "samples", "p50", "p99", "mean", "max"], widths: widths)]
        func add(_ name: String, _ figures: Figures) {
            lines.append(TableFormat.row([name, String(figures.samples), TableFormat.fixed(figures.p50, 2), TableFormat.fixed(figures.p99, 2),
                                          TableFormat.fixed(figures.mean, 2), TableFormat.fixed(figures.max, 2)], widths: widths))
        }
        add("Drop 10 MiB WAV, private SQLite store (ms)", dropSQLite)
        add("Drop 10 MiB WAV, shared PostgreSQL catalogue (ms)", dropPostgres)
        add("Drop on host A → PieceDropped on host B (ms)", announced)
        add("List over \(pieces) pieces, tempo range + tonality (ms)", list)
        let ratio = dropPostgres.p50 / dropSQLite.p50
        lines.append("drops from three hosts at once (4 clients each, 1 s WAV): \(TableFormat.fixed(dropsPerSecond, 1)) per second")
        lines.append("catalogue: \(pieces) pieces (server-side fill \(TableFormat.fixed(fillSeconds, 1)) s); \(processors) processors")
        lines.append("drop on PostgreSQL / SQLite p50: \(TableFormat.fixed(ratio, 2))×")
        lines.append("goals: List p50 < 10 ms: \(TableFormat.fixed(list.p50, 2)) ms \(list.p50 < 10 ? "met" : "NOT met"); "
            + "drop → PieceDropped elsewhere p99 < 200 ms: \(TableFormat.fixed(announced.p99, 1)) ms \(announced.p99 < 200 ? "met" : "NOT met")")
        return lines.joined(separator: "\n")
    }
}
