import EarshotClient
import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc

/// The shared catalogue's write path on a fleet, for `earshot-bench pieces --database`:
/// drops from three hosts at once on the write path as it is and, in the same run, on the
/// one before (every drop and deletion waiting on one advisory lock and one counter row,
/// restored for the measurement by a trigger of the administrator's); and how long a drop
/// waits while another host has gone silent in the middle of its own.
extension SharedPiecesBenchmark {
    /// What the write path before schema 8 did in every drop's and deletion's transaction:
    /// a lock every host's writers queue on, and one row every one of them updates.
    static let earlierWritePath = [
        "CREATE TABLE earlier_piece_count (only_row boolean PRIMARY KEY DEFAULT true, n bigint NOT NULL)",
        "INSERT INTO earlier_piece_count (n) VALUES (0)",
        """
        CREATE FUNCTION earlier_write_path() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
        BEGIN
            UPDATE earlier_piece_count SET n = n + CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END;
            PERFORM pg_advisory_xact_lock(7306915982087992370);
            RETURN NULL;
        END
        $$
        """,
        "CREATE TRIGGER earlier_write_path AFTER INSERT OR DELETE ON piece FOR EACH STATEMENT EXECUTE FUNCTION earlier_write_path()",
    ]

    /// Drops of a 1 s WAV from three hosts at once, `clients` clients each, `drops` each, on
    /// a catalogue of their own: each drop's time in milliseconds. With `earlier`, the
    /// catalogue has the earlier write path back.
    func fleetDrops(_ executable: String, database: (String) async throws -> String, work: URL, earlier: Bool,
                    clients: Int = 4, drops: Int = 20) async throws -> [Double] {
        let url = try await database(earlier ? "earlier" : "fleet")
        let label = earlier ? "earlier" : "current"
        var hosts: [Host] = []
        for index in 0..<3 {
            hosts.append(try await Host.start(executable, arguments: try await Self.host("\(Self.fleet)-\(label)-\(index)", catalogue: url,
                                                                                        executable: executable, work: work)))
        }
        defer { for host in hosts { Task { await host.stop() } } }
        if earlier {
            for statement in Self.earlierWritePath {
                _ = try await ToolRun.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", statement])
            }
        }
        let stems = try (0..<(3 * clients)).map { index -> URL in
            let file = work.appendingPathComponent("fleet-\(label)-\(index).wav")
            try PiecesBenchmark.writeWAV(file, dataBytes: 44100 * 4, seed: 1000 + index + (earlier ? 100 : 0))
            return file
        }
        return try await withThrowingTaskGroup(of: [Double].self) { group in
            for (hostIndex, host) in hosts.enumerated() {
                for client in 0..<clients {
                    let stem = stems[hostIndex * clients + client]
                    group.addTask {
                        let connection = try await host.bus.connect()
                        defer { connection.close() }
                        let earshot = Earshot(connection: connection)
                        var times: [Double] = []
                        for round in 0..<drops {
                            let start = monotonicNanoseconds()
                            try await host.drop("Fleet \(client).\(round)", mixStemPath: stem.path, on: earshot)
                            times.append(Double(monotonicNanoseconds() - start) / 1e6)
                        }
                        return times
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    /// Another host goes silent in the middle of a drop (its role, through psql, has written
    /// the row of the object it is storing when the path goes silent, no reset), `rounds`
    /// times: how long, from the silence, a drop of that very audio on a host that stayed
    /// takes (it waits on that row until the server ends the silent session), and one of
    /// other audio on a third host; in seconds.
    static func silentWriter(_ executable: String, url: String, server: PostgresTestServer, work: URL,
                             rounds: Int = 5) async throws -> (same: [Double], other: [Double]) {
        let relay = try TCPRelay(to: server.port)
        defer { relay.stop() }
        let arguments = try await (0..<2).asyncMap { index in
            try await Self.host("\(fleet)-stay-\(index)", catalogue: url, executable: executable, work: work)
        }
        let (a, b) = (try await Host.start(executable, arguments: arguments[0]), try await Host.start(executable, arguments: arguments[1]))
        defer { Task { await a.stop(); await b.stop() } }
        let silentName = "\(fleet)-silent"
        let silentArguments = try await Self.host(silentName, catalogue: url, executable: executable, work: work)
        let passwordFile = silentArguments[silentArguments.firstIndex(of: "--database-password-file")! + 1]
        let password = try String(contentsOfFile: passwordFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let database = String(url.split(separator: "/").last!.split(separator: "?").first!)
        var same: [Double] = [], other: [Double] = []
        for round in 0..<rounds {
            let stem = work.appendingPathComponent("silent-\(round).wav")
            try PiecesBenchmark.writeWAV(stem, dataBytes: 44100 * 4, seed: 5000 + round)
            let bytes = try Data(contentsOf: stem)
            let hash = String(try await ToolRun.run(["/usr/bin/sha256sum", stem.path]).prefix(64))
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw BenchmarkError("pipe failed") }
            let sql = Array("BEGIN;\nINSERT INTO object (hash, size) VALUES ('\(hash)', \(bytes.count));\nSELECT 'written';\n".utf8)
            _ = sql.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
            let output = work.appendingPathComponent("silent-\(round).out")
            let out = open(output.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            let psql = try ChildProcess(["/usr/bin/psql", "-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-p", "\(relay.port)", "-U", silentName,
                                         "-d", database],
                                        environment: ["PGPASSWORD": password, "PATH": "/usr/bin:/bin"], stdin: ends[0], stdout: out,
                                        logPath: work.appendingPathComponent("silent-\(round).err").path)
            close(ends[0])
            close(out)
            let written = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < written, !((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("written") {
                try await Task.sleep(for: .milliseconds(10))
            }
            relay.cut()
            let cut = monotonicNanoseconds()
            let otherStem = work.appendingPathComponent("silent-other-\(round).wav")
            try PiecesBenchmark.writeWAV(otherStem, dataBytes: 44100 * 4, seed: 6000 + round)
            async let sameDrop: Void = { _ = try await a.drop("Same as the silent one \(round)", mixStemPath: stem.path) }()
            async let otherDrop: Double = {
                _ = try await b.drop("Other \(round)", mixStemPath: otherStem.path)
                return Double(monotonicNanoseconds() - cut) / 1e9
            }()
            try await sameDrop
            same.append(Double(monotonicNanoseconds() - cut) / 1e9)
            other.append(try await otherDrop)
            relay.restore()
            close(ends[1])
            psql.stop()
        }
        return (same, other)
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
