import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Glibc
@testable import PostgresPieceStore
import Testing

/// A fleet that trusts no host: each host a database role whose rows the database holds it
/// to, whatever SQL it sends; no host able to hold the others up, or to stay broken; and
/// every change told once, in order, whatever the link does.
@Suite struct FleetTrustTests {
    /// SQL as the host `host` (its own role and password, with psql).
    static func psql(_ shared: SharedHosts, as host: SharedHosts.Host, _ sql: String) async throws -> ToolRun.Outcome {
        try await shared.server.psql(sql, database: shared.database, as: host.name, password: host.password)
    }

    /// A host's role: over plain SQL it sees no other host's unlisted rows (pieces, their
    /// assets, lineage, bytes, tallies, changes), changes no other host's piece, adds none
    /// in another's name, and changes nothing in place; over the bus the same piece is as
    /// if it did not exist, and its drop is not announced there. A host cannot serve as
    /// another: with another's name and its own password the server refuses it.
    @Test func eachHostIsARoleAndTheDatabaseHoldsItToItsOwn() async throws {
        try await SharedHosts.with(2) { shared in
            let (a, b) = (shared.hosts[0], shared.hosts[1])
            let onB = try await b.changes()
            let stem = try SharedHosts.stem(a, "private", frequency: 610)
            let secret = try await a.pieces.drop(.titled("Secret", stem: stem) { $0.listed = false })
            let open = try await a.pieces.drop(.titled("Open", stem: try SharedHosts.stem(a, "open", frequency: 620)) { $0.basedOn = [secret] })
            let hash = try await shared.server.psql("SELECT hash FROM asset WHERE piece_id = '\(secret)'", database: shared.database)
                .trimmingCharacters(in: .whitespacesAndNewlines)

            // What b's role sees of a's rows.
            for (sql, expected) in [
                ("SELECT count(*) FROM piece WHERE id = '\(secret)'", "0"),
                ("SELECT count(*) FROM piece WHERE id = '\(open)'", "1"),
                ("SELECT count(*) FROM asset WHERE piece_id = '\(secret)'", "0"),
                ("SELECT count(*) FROM based_on WHERE piece_id = '\(secret)'", "0"),
                ("SELECT count(*) FROM object_chunk WHERE hash = '\(hash)'", "0"),
                ("SELECT count(*) FROM piece_change WHERE piece_id = '\(secret)'", "0"),
                ("SELECT count(*) FROM piece_tally WHERE author_user <> '' AND host <> current_user", "0"),
                ("DELETE FROM piece WHERE id = '\(open)' RETURNING id", ""),
            ] {
                let outcome = try await Self.psql(shared, as: b, sql)
                #expect(outcome.succeeded && outcome.output.trimmingCharacters(in: .whitespacesAndNewlines) == expected,
                        "b: \(sql) → \(outcome.output) \(outcome.errors)")
            }
            // Writes the database refuses outright.
            for sql in [
                "UPDATE piece SET title = 'Mine now' WHERE id = '\(open)'",
                "UPDATE piece SET listed = true",
                """
                INSERT INTO piece (id, title, description, length_us, tonality, scale_mask, listed, author, author_user, author_uid,
                                   created_at, sample_rate, channels, loudness_lufs, true_peak_dbtp)
                VALUES ('00000000-0000-4000-8000-00000000beef', 'Forged', '', 1, 'unknown', 0, true, 'root@\(a.name)', 'root@\(a.name)', 0,
                        '2026-01-01T00:00:00.000Z', 44100, 1, -20, -1)
                """,
                "INSERT INTO piece_change (kind, piece_id, instance) VALUES ('x', '\(open)', 'forged')",
                "UPDATE piece_tally SET n = n + 1",
                "DELETE FROM object WHERE hash = '\(hash)'",
            ] {
                let outcome = try await Self.psql(shared, as: b, sql)
                #expect(!outcome.succeeded, "b's role was allowed: \(sql)")
            }
            #expect(try await shared.server.psql("SELECT count(*) FROM piece", database: shared.database) == "2\n")

            // Over the bus: b does not have the unlisted piece, nor was its drop announced.
            await expectDBusError(EarshotErrorName.pieceNotFound.name) { _ = try await b.pieces.get(secret) }
            await expectDBusError(EarshotErrorName.pieceNotFound.name) { _ = try await b.pieces.mixStem(secret) }
            #expect(await onB.next(within: .seconds(5)) { $0.dropped?.id == open } != nil)
            #expect(await onB.next(within: .seconds(1)) { $0.dropped?.id == secret } == nil, "b announced a's unlisted piece")
            #expect(try await b.pieces.list().total == 1)
            #expect(try await a.pieces.list().total == 2)

            // b cannot start as a: a's name with b's password is refused by the server.
            let impostor = try await PrivateBus.start()
            defer { impostor.stop() }
            do {
                let service = try await ServiceProcess("earshot-pieces", arguments: [
                    "--data-dir", impostor.directory.appendingPathComponent("p").path,
                    "--database", a.url, "--database-password-file", b.passwordFile.path,
                ], bus: impostor, busName: PiecesFixture.busName)
                service.stop()
                Issue.record("a host started as another with its own password")
            } catch {
                #expect("\(error)".contains("password authentication failed"), "\(error)")
            }
            // Nor by naming itself a: an earlier command line's --host-name must be its own role.
            let named = try await ToolRun.attempt([SharedCatalogueTests.piecesExecutable, "--database", b.url,
                                                   "--database-password-file", b.passwordFile.path, "--host-name", a.name,
                                                   "--address", impostor.address], environment: [:])
            #expect(!named.succeeded && named.errors.contains("is not the role of --database"), "\(named.errors)")
        }
    }

    /// A title search stays on the title index under the row policies. A host's own `title
    /// ILIKE …` would be checked only after them, on every piece (ILIKE is no leakproof
    /// operator), so `List` finds titles through `piece_titled`. Here sequential scans are
    /// priced out for the database, and a host's title search must show in the trigram
    /// index's count of scans.
    @Test func aTitleSearchReadsTheTitleIndexUnderThePolicies() async throws {
        let server = try await PostgresTestServer.sharedServer()
        let url = try await server.createDatabase()
        let name = String(url.split(separator: "/").last!.split(separator: "?").first!)
        _ = try await server.psql("ALTER DATABASE \(name) SET enable_seqscan = off")
        try await SharedHosts.with(1, server: server, database: url) { shared in
            let host = shared.hosts[0]
            let riff = try await host.pieces.drop(.titled("Riff in D", stem: try SharedHosts.stem(host, "riff", frequency: 350)))
            func titleIndexScans() async throws -> Int {
                let count = try await server.psql("SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'piece_title_trigram'",
                                                  database: shared.database)
                return try #require(Int(count.trimmingCharacters(in: .whitespacesAndNewlines)))
            }
            let before = try await titleIndexScans()
            #expect(try await host.pieces.list { $0.titleContains = "riff" }.ids == [riff])
            // A backend reports its counts within about 10 s of going idle.
            let deadline = ContinuousClock.now + .seconds(15)
            var after = before
            while after == before, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(500))
                after = try await titleIndexScans()
            }
            #expect(after > before, "the title search did not read piece_title_trigram")
        }
    }

    /// Two head units made from one image (one hostname, the same users) are two roles: root
    /// and alice of the second neither see nor delete the first's unlisted pieces, and the
    /// fleet never confuses whose they are.
    @Test func twoHostsClonedFromOneImageKeepTheirPiecesApart() async throws {
        try await SharedHosts.with(2, name: "clone") { shared in
            let (first, second) = (shared.hosts[0], shared.hosts[1])
            let stem = try SharedHosts.stem(first, "take", frequency: 480)
            let take = try await first.pieces.drop(.titled("First unit's take", stem: stem) { $0.listed = false })
            #expect(try await first.pieces.get(take).author == "root@\(first.name)")
            await expectDBusError(EarshotErrorName.pieceNotFound.name) { _ = try await second.pieces.get(take) }
            await expectDBusError(EarshotErrorName.pieceNotFound.name) { try await second.pieces.delete(take) }
            #expect(try await second.pieces.list().total == 0)
            #expect(try await first.pieces.list().total == 1)
            try await first.pieces.delete(take)
        }
    }

    /// A host whose network goes silent in the middle of a drop, its transaction open and
    /// the row of the object it was storing locked (the silent host is its role through
    /// psql, which has just written that row when the relay goes silent: no reset, no
    /// word), holds up no other host's drops beyond the database's limits: 20 drops on two
    /// other hosts, two of them of that very audio (they wait on its row), all succeed
    /// within 10 s of the cut.
    @Test func aSilentHostHoldsUpNoOtherHostsDrops() async throws {
        let server = try await PostgresTestServer.sharedServer()
        let relay = try TCPRelay(to: server.port)
        defer { relay.stop() }
        try await SharedHosts.with(3, server: server) { shared in
            let (a, b, silent) = (shared.hosts[0], shared.hosts[1], shared.hosts[2])
            let shared_stem = try SharedHosts.stem(a, "same", frequency: 330)
            let bytes = try Data(contentsOf: shared_stem)
            let copy = b.bus.directory.appendingPathComponent("same.wav")
            try bytes.write(to: copy)
            let hash = TestMedia.sha256(Array(bytes))
            // The silent host's transaction, as its drop's starts: the object's row first.
            var ends: [Int32] = [0, 0]
            try #require(pipe(&ends) == 0)
            defer { close(ends[1]) }
            let statements = Array("BEGIN;\nINSERT INTO object (hash, size) VALUES ('\(hash)', \(bytes.count));\nSELECT 'written';\n".utf8)
            _ = statements.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
            let output = silent.bus.directory.appendingPathComponent("psql.out")
            let out = open(output.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            let psql = try ChildProcess(["/usr/bin/psql", "-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-p", "\(relay.port)",
                                         "-U", silent.name, "-d", shared.database],
                                        environment: ["PGPASSWORD": silent.password, "PATH": "/usr/bin:/bin"], stdin: ends[0], stdout: out,
                                        logPath: silent.bus.directory.appendingPathComponent("psql.err").path)
            close(ends[0])
            close(out)
            defer { psql.stop() }
            let written = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < written, !((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("written") {
                try await Task.sleep(for: .milliseconds(20))
            }
            try #require(((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("written"), "the silent host's row was not written")
            relay.cut()
            let cut = ContinuousClock.now
            let times = try await withThrowingTaskGroup(of: Duration.self) { group in
                for index in 0..<20 {
                    let host = index % 2 == 0 ? a : b
                    let stem = index < 2 ? (index == 0 ? shared_stem : copy) : try SharedHosts.stem(host, "small-\(index)", frequency: 400 + Double(index))
                    group.addTask {
                        _ = try await host.pieces.drop(.titled("During the silence \(index)", stem: stem))
                        return cut.duration(to: .now)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }.sorted()
            }
            print("drops during another host's silence, from the cut: p50 \(times[times.count / 2]), max \(times.last!)")
            #expect(times.last! < .seconds(10), "a drop waited \(times.last!) after another host went silent: \(times)")
            // The same audio was stored once, by the hosts that stayed.
            #expect(try await server.psql("SELECT count(*) FROM object WHERE hash = '\(hash)'", database: shared.database) == "1\n")
            relay.restore()
        }
    }

    /// Only the pooled connections' path goes silent (the listener's stays): calls fail while
    /// it is silent, and once it is back the host serves again within 5 s, by itself.
    @Test func aHostWhosePooledConnectionsWereCutServesAgainOnceTheyAreBack() async throws {
        let server = try await PostgresTestServer.sharedServer()
        let relay = try TCPRelay(to: server.port)
        defer { relay.stop() }
        try await SharedHosts.with(1, server: server, route: SharedHosts.route(0, through: relay, to: server)) { shared in
            let host = shared.hosts[0]
            _ = try await host.pieces.list()
            let port = try await shared.server.psql("""
                SELECT client_port FROM pg_stat_activity WHERE usename = '\(host.name)' AND application_name = 'earshot-pieces listener'
                """, database: shared.database).trimmingCharacters(in: .whitespacesAndNewlines)
            let listener = try #require(Int(port), "no listening connection of the host: '\(port)'")
            relay.cut(connectionsExcept: listener)
            // A call on a silent pooled connection fails (at its statement's deadline at most).
            let failed = await expectDBusError(EarshotErrorName.storageUnavailable.name) { _ = try await host.pieces.list() }
            #expect(failed != nil)
            relay.restore()
            let restored = ContinuousClock.now
            var serving = false
            while !serving, restored.duration(to: .now) < .seconds(5) {
                serving = (try? await host.pieces.list()) != nil
                if !serving { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(serving, "the host did not serve within 5 s of its pooled connections' path coming back:\n\(host.service.logText.suffix(2000))")
        }
    }

    /// A link that flaps (cut, back, cut again while the host catches up, back): every drop
    /// and deletion another host made meanwhile is announced once, in order (a piece dropped
    /// and deleted while the host was away gives its deletion alone).
    @Test func aFlappingLinkAnnouncesEveryChangeOnceInOrder() async throws {
        let server = try await PostgresTestServer.sharedServer()
        let relay = try TCPRelay(to: server.port)
        defer { relay.stop() }
        try await SharedHosts.with(2, server: server, route: SharedHosts.route(1, through: relay, to: server)) { shared in
            let (a, b) = (shared.hosts[0], shared.hosts[1])
            let changes = try await b.changes()
            let stem = try SharedHosts.stem(a, "flap", frequency: 640)
            var expected: [String] = []
            relay.cut()
            for round in 0..<3 {
                var made: [String] = []
                for index in 0..<4 {
                    made.append(try await a.pieces.drop(.titled("flap \(round).\(index)", stem: stem)))
                }
                expected += made.dropFirst().map { "\(PiecesContract.Manager.pieceDropped.name) \($0)" }
                try await a.pieces.delete(made[0])
                expected.append("\(PiecesContract.Manager.pieceDeleted.name) \(made[0])")
                // Back for a moment, then cut again while b is catching up.
                relay.restore()
                try await Task.sleep(for: .milliseconds(round == 2 ? 0 : 150))
                if round < 2 { relay.cut() }
                try await Task.sleep(for: .seconds(round < 2 ? 2 : 0))
            }
            var announced: [String] = []
            let deadline = ContinuousClock.now + .seconds(30)
            while announced.count < expected.count, ContinuousClock.now < deadline {
                guard let change = await changes.next(within: deadline - .now) else { break }
                if change != .missed { announced.append(change.text) }
            }
            while let late = await changes.next(within: .milliseconds(1000)) { announced.append(late.text) }
            #expect(announced == expected, "b announced \(announced.count) of \(expected.count):\n\(announced)\n\(b.service.logText.suffix(2000))")
        }
    }

    /// Every connection of a host, and the server's end of it, sends TCP keepalives: a path
    /// that goes silent is found dead by both ends even when nothing is under way.
    @Test func everyConnectionKeepsItselfAlive() async throws {
        try await SharedHosts.with(1) { shared in
            let host = shared.hosts[0]
            _ = try await host.pieces.list()
            let port = shared.server.port
            // ss -o: the timer of each established connection to and from the server's port.
            let sockets = try await ToolRun.run(["ss", "-tno", "state", "established", "( dport = :\(port) or sport = :\(port) )"])
            let pid = host.service.pid
            let own = try await ToolRun.run(["ss", "-tnop", "state", "established", "( dport = :\(port) )"])
                .split(separator: "\n").filter { $0.contains("pid=\(pid),") }
            #expect(own.count >= 2, "the host has \(own.count) connections to the server:\n\(sockets)")
            for line in own { #expect(line.contains("timer:(keepalive"), "a host connection without keepalive: \(line)") }
            // The server's end of each: its own keepalive (the role's tcp_keepalives_* settings).
            let serverEnds = sockets.split(separator: "\n").filter { $0.contains(":\(port) ") && $0.contains("timer:(keepalive") }
            #expect(serverEnds.count >= own.count * 2, "keepalive timers on both ends:\n\(sockets)")
            let settings = try await Self.psql(shared, as: host, "SHOW idle_in_transaction_session_timeout")
            #expect(settings.output.trimmingCharacters(in: .whitespacesAndNewlines) == "5s")
        }
    }

    /// TLS by default: a URL that names no `sslmode`, to an address off the loopback, is
    /// `verify-full` against the system's authorities (the test's own authority put in the
    /// system's store with update-ca-certificates, and taken out after): the host connects;
    /// with that authority gone from the store, it is refused.
    @Test func tlsByDefaultIsCheckedAgainstTheSystemsAuthorities() async throws {
        let address = try #require(PostgresTestServer.externalAddress(), "this machine has no IPv4 address off the loopback")
        let server = try await PostgresTestServer.startWithTLS(addresses: [address])
        let anchor = URL(fileURLWithPath: "/usr/local/share/ca-certificates/earshot-test-\(UUID().uuidString.prefix(8)).crt")
        defer {
            try? FileManager.default.removeItem(at: anchor)
            _ = system("/usr/sbin/update-ca-certificates >/dev/null 2>&1")
            Task { await server.remove() }
        }
        let catalogue = try await server.createDatabase()
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let role = PostgresTestServer.hostName("tls-default")
        let (_, passwordFile) = try await server.addHost(role, catalogue: catalogue, directory: bus.directory)
        let url = "postgresql://\(role)@\(address):\(server.port)/\(catalogue.split(separator: "/").last!)"
        func start() async throws -> ServiceProcess {
            try await ServiceProcess("earshot-pieces", arguments: ["--data-dir", bus.directory.appendingPathComponent("p").path,
                                                                   "--database", url, "--database-password-file", passwordFile.path],
                                     bus: bus, busName: PiecesFixture.busName)
        }
        try FileManager.default.copyItem(at: URL(fileURLWithPath: server.certificateAuthority), to: anchor)
        _ = try await ToolRun.run(["/usr/sbin/update-ca-certificates"])
        let trusted = try await start()
        #expect(trusted.logText.contains("sslmode=verify-full"), "\(trusted.logText.suffix(1000))")
        await trusted.shutdown()
        try FileManager.default.removeItem(at: anchor)
        _ = try await ToolRun.run(["/usr/sbin/update-ca-certificates"])
        do {
            let refused = try await start()
            refused.stop()
            Issue.record("a server signed by an authority the system does not trust was taken")
        } catch {
            #expect("\(error)".contains("TLSRefused: the server's certificate is not signed"), "\(error)")
        }
    }

    /// What counts as the loopback (where plain TCP is the default) is an address, parsed,
    /// not the text of a name.
    @Test func theLoopbackIsAnAddressNotAName() {
        for host in ["localhost", "127.0.0.1", "127.9.8.7", "::1", "[::1]", "::ffff:127.0.0.1"] {
            #expect(SharedCatalogueConfiguration.isLoopback(host), "\(host)")
        }
        for host in ["127.example.net", "127.0.0.1.evil.net", "10.0.0.1", "::2", "db.example", "192.0.2.2", "1270.0.0.1"] {
            #expect(!SharedCatalogueConfiguration.isLoopback(host), "\(host)")
        }
    }

    /// A host away longer than the change log keeps its changes (here: the log trimmed to
    /// nothing while the host is cut off) is told so once it is back: `ChangesMissed`, once,
    /// rather than nothing.
    @Test func aHostAwayLongerThanTheLogKeepsSaysSo() async throws {
        let server = try await PostgresTestServer.sharedServer()
        let relay = try TCPRelay(to: server.port)
        defer { relay.stop() }
        try await SharedHosts.with(2, server: server, route: SharedHosts.route(1, through: relay, to: server)) { shared in
            let (a, b) = (shared.hosts[0], shared.hosts[1])
            let changes = try await b.changes()
            relay.cut()
            let stem = try SharedHosts.stem(a, "missed", frequency: 660)
            for index in 0..<3 { _ = try await a.pieces.drop(.titled("while away \(index)", stem: stem)) }
            // What the log would have forgotten after 30 days.
            _ = try await server.psql("SELECT piece_change_trim('0 seconds')", database: shared.database)
            relay.restore()
            var seen: [PieceChange] = []
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline, !seen.contains(.missed) {
                guard let change = await changes.next(within: deadline - .now) else { break }
                seen.append(change)
            }
            while let late = await changes.next(within: .milliseconds(1500)) { seen.append(late) }
            #expect(seen.filter { $0 == .missed }.count == 1, "b emitted \(seen.map(\.text))")
            #expect(!seen.contains { $0.dropped != nil }, "b announced changes the log no longer holds: \(seen.map(\.text))")
            #expect(try await b.pieces.list().total == 3)
        }
    }
}
