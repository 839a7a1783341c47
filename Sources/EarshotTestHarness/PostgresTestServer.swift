import EarshotSync
import Foundation
import Glibc

/// A throwaway PostgreSQL server (Debian's `postgresql`) in a temporary directory, on a
/// free port of 127.0.0.1, trusting local connections as user `earshot` (the catalogues'
/// administrator) and asking every other role (a host's) for its password. The server
/// refuses to run as root, so as root it runs as the `postgres` user the package creates.
public final class PostgresTestServer: Sendable {
    public let directory: URL
    public let port: Int
    /// `-c name=value` settings the server starts with, beyond the harness's own.
    public let settings: [String]
    public static let user = "earshot"

    /// The directory of initdb and pg_ctl: the newest installed PostgreSQL.
    static var binaries: String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        return "\(root)/\(versions.last ?? 15)/bin"
    }

    /// The command line that runs `arguments` as the server's user.
    static func asServerUser(_ arguments: [String]) -> [String] {
        getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + arguments : arguments
    }

    private init(directory: URL, port: Int, settings: [String]) {
        self.directory = directory
        self.port = port
        self.settings = settings
    }

    /// Creates the cluster and starts the server (stopped when the process exits, if
    /// nobody removed it before).
    /// `settings` (`name=value`) are given to the server; `prepare` runs on the cluster's
    /// directory before the server first starts (certificates, pg_hba.conf).
    public static func start(settings: [String] = [], prepare: (URL) async throws -> Void = { _ in }) async throws -> PostgresTestServer {
        registerExitHandler
        let directory = URL(fileURLWithPath: try makeTemporaryDirectory())
        if getuid() == 0 {
            guard let user = getpwnam("postgres") else { throw HarnessError("no postgres user: install Debian's postgresql") }
            chown(directory.path, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        _ = try await ToolRun.run(asServerUser(["\(binaries)/initdb", "-D", directory.path + "/data", "-A", "trust", "-U", user,
                                                "--no-sync", "-E", "UTF8"]))
        // Hosts prove their passwords; the administrator is trusted here (a test's `prepare`
        // may write rules of its own).
        try hostAccessRules.write(to: directory.appendingPathComponent("data/pg_hba.conf"), atomically: false, encoding: .utf8)
        try await prepare(directory)
        // A free port can be taken by someone else before the server binds it: try others.
        for attempt in 1...5 {
            let server = PostgresTestServer(directory: directory, port: try freePort(), settings: settings)
            do {
                try await server.startServer()
                _ = running.withLock { $0.insert(directory.path) }
                return server
            } catch where attempt < 5 {
                continue
            }
        }
        throw HarnessError("cannot start PostgreSQL in \(directory.path)")
    }

    /// Starts the server of this cluster (again, after `stop`).
    public func startServer() async throws {
        _ = try await ToolRun.run(Self.asServerUser([
            "\(Self.binaries)/pg_ctl", "-D", directory.path + "/data", "-l", directory.path + "/log", "-w", "-o",
            (["-k \(directory.path) -c listen_addresses=127.0.0.1 -p \(port) -c fsync=off -c max_connections=200"]
                + settings.map { "-c \($0)" }).joined(separator: " "),
            "start",
        ]))
    }

    /// Stops the server: `fast` ends sessions and shuts down cleanly, `immediate` as a crash.
    public func stopServer(mode: String = "fast") async throws {
        _ = try await ToolRun.run(Self.asServerUser(["\(Self.binaries)/pg_ctl", "-D", directory.path + "/data", "-m", mode, "-w", "stop"]))
    }

    /// Stops the server and removes its directory.
    public func remove() async {
        try? await stopServer(mode: "immediate")
        try? FileManager.default.removeItem(at: directory)
        _ = Self.running.withLock { $0.remove(directory.path) }
    }

    /// A new empty database; its URL (no password: the server trusts local connections).
    public func createDatabase() async throws -> String {
        let name = "earshot_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        _ = try await psql("CREATE DATABASE \(name)")
        return url(name)
    }

    public func url(_ database: String) -> String { "postgresql://\(Self.user)@127.0.0.1:\(port)/\(database)" }

    /// A role `name` that must give `password` (scram-sha-256) from 127.0.0.1, owning
    /// every database: a rule for it goes first in pg_hba.conf, and the server reloads.
    public func addPasswordUser(_ name: String, password: String) async throws {
        _ = try await psql("CREATE ROLE \(name) LOGIN SUPERUSER PASSWORD '\(password)'")
        let hba = directory.appendingPathComponent("data/pg_hba.conf")
        let rules = try String(contentsOf: hba, encoding: .utf8)
        try ("host all \(name) 127.0.0.1/32 scram-sha-256\n" + rules).write(to: hba, atomically: false, encoding: .utf8)
        _ = try await ToolRun.run(Self.asServerUser(["\(Self.binaries)/pg_ctl", "-D", directory.path + "/data", "reload"]))
    }

    /// The access rules the catalogue's hosts meet: the administrator (`user`) trusted on
    /// this machine, every other role (a host's) proving its password (scram-sha-256),
    /// from anywhere.
    public static let hostAccessRules = """
        local all \(user) trust
        host all \(user) 127.0.0.1/32 trust
        host all \(user) ::1/128 trust
        local all all scram-sha-256
        host all all 0.0.0.0/0 scram-sha-256
        host all all ::/0 scram-sha-256

        """

    /// A host of the catalogue at `url` (the administrator's, from `createDatabase`) made by
    /// `earshot-pieces add-host` as its administrator would: the host's role `name`, the
    /// URL it serves with (the administrator's, as `name`) and the file holding its new
    /// password (in `directory`).
    public func addHost(_ name: String, catalogue url: String, directory: URL, fleetAdministrator: Bool = false) async throws
        -> (url: String, passwordFile: URL) {
        let file = directory.appendingPathComponent("\(name).password")
        let executable = ServiceProcess.productsDirectory.appendingPathComponent("earshot-pieces").path
        _ = try await ToolRun.run([executable, "add-host", name, "--database", url, "--password-file", file.path]
                                  + (fleetAdministrator ? ["--fleet-admin"] : []))
        return (url.replacingOccurrences(of: "postgresql://\(Self.user)@", with: "postgresql://\(name)@"), file)
    }

    /// A host name not taken on this server yet (roles are the server's, not a database's):
    /// `prefix` and a few random characters.
    public static func hostName(_ prefix: String) -> String {
        prefix + "-" + UUID().uuidString.lowercased().prefix(8)
    }

    /// Runs SQL with psql as the role `role` with `password` (a host, say); what it printed.
    public func psql(_ sql: String, database: String, as role: String, password: String) async throws -> ToolRun.Outcome {
        try await ToolRun.attempt(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)",
                                   "-U", role, "-d", database, "-c", sql], environment: ["PGPASSWORD": password])
    }

    /// Replaces pg_hba.conf with `rules` and has the server read it again.
    public func replaceAccessRules(_ rules: String) async throws {
        try rules.write(to: directory.appendingPathComponent("data/pg_hba.conf"), atomically: false, encoding: .utf8)
        _ = try await ToolRun.run(Self.asServerUser(["\(Self.binaries)/pg_ctl", "-D", directory.path + "/data", "reload"]))
        try await Task.sleep(for: .milliseconds(300))
    }

    /// Hands `url` to the server's user, readable by it alone (PostgreSQL's rule for keys).
    public static func giveToServer(_ url: URL) throws {
        if getuid() == 0 {
            guard let user = getpwnam("postgres") else { throw HarnessError("no postgres user") }
            chown(url.path, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        chmod(url.path, 0o600)
    }

    /// Runs SQL with psql; returns what it printed (unaligned, tuples only).
    public func psql(_ sql: String, database: String = "postgres") async throws -> String {
        try await ToolRun.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)",
                               "-U", Self.user, "-d", database, "-c", sql])
    }

    // MARK: One server for a test process

    private static let shared = Locked<Task<PostgresTestServer, any Error>?>(nil)
    /// Servers' directories still running, stopped when the process exits.
    private static let running = Locked<Set<String>>([])

    /// The server the tests of this process share (each in databases of its own), started
    /// on first use and stopped when the process exits.
    public static func sharedServer() async throws -> PostgresTestServer {
        let task = shared.withLock { task in
            if let task { return task }
            let started = Task { try await PostgresTestServer.start() }
            task = started
            return started
        }
        return try await task.value
    }

    /// Stops every server still running when the process exits.
    private static let registerExitHandler: Void = {
        atexit { PostgresTestServer.stopAllAtExit() }
    }()

    private static func stopAllAtExit() {
        for directory in running.withLock({ $0 }) {
            let command = asServerUser(["\(binaries)/pg_ctl", "-D", directory + "/data", "-m", "immediate", "-w", "stop"])
            _ = system(command.joined(separator: " ") + " >/dev/null 2>&1")
            _ = system("rm -rf '\(directory)'")
        }
    }

    private static func makeTemporaryDirectory() throws -> String {
        var template = Array("/tmp/earshot-postgres.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw HarnessError("cannot create a directory for PostgreSQL") }
        chmod(made, 0o755)
        return String(cString: made)
    }

    /// A TCP port on 127.0.0.1 nobody uses now, below Linux's range for outgoing
    /// connections' own ports (32768–60999), which would otherwise take it soon.
    static func freePort() throws -> Int {
        for _ in 0..<100 {
            let port = Int.random(in: 20000..<32000)
            if canBind(port) { return port }
        }
        throw HarnessError("cannot find a free port in 20000–31999")
    }

    static func canBind(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        return withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 }
        }
    }
}
