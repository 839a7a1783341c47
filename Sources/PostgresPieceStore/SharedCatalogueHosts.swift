import Foundation
import Logging
import PieceStore
import PostgresNIO

/// The catalogue's hosts as its administrator keeps them: each host a role of its own
/// (`SharedCatalogueAccess`), made, retired, and the schema brought up to date, from an
/// administrator's connection (the catalogue's owner, or a superuser). A host never does
/// these: it owns nothing of the catalogue.
public enum SharedCatalogueHosts {
    /// A host's name: a role's, and the part of its authors after the `@`.
    public static func isValidName(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLowercase || first == "_", name.count <= 63 else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    /// What `add-host` made: the role and where its password went.
    public struct NewHost: Sendable {
        public let name: String
        public let password: String
    }

    /// Runs `body` on a connection of the administrator's (`administrator`'s role).
    /// Errors as the server said them (`StoreFailure`), or the caller's own.
    static func asAdministrator<T: Sendable>(_ administrator: SharedCatalogueConfiguration, logger: Logger,
                                             _ body: (PostgresConnection) async throws -> T) async throws -> T {
        let pool = try PostgresConnections(administrator, limit: 1, logger: logger)
        let connection: PostgresConnection
        do {
            connection = try await pool.connectAlone(purpose: "administration")
        } catch {
            throw StoreFailure("cannot reach the catalogue at \(administrator): \(PostgresFailure.describe(error))")
        }
        do {
            let value = try await body(connection)
            try? await connection.close()
            return value
        } catch let error as PSQLError {
            try? await connection.close()
            throw StoreFailure("the catalogue at \(administrator) refused: \(PostgresFailure.describe(error))")
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Brings the catalogue's schema up to date; returns the versions applied.
    @discardableResult
    public static func upgrade(_ administrator: SharedCatalogueConfiguration, logger: Logger) async throws -> [Int] {
        try await asAdministrator(administrator, logger: logger) { connection in
            try await SharedCatalogueSchema.migrate(connection, logger: logger)
        }
    }

    /// Makes the role `name` (a member of `earshot_host`, and of `earshot_fleet_admin` with
    /// `fleetAdministrator`) with a new password, after bringing the schema up to date, and
    /// gives it the catalogue's session settings. The password is sent as a SCRAM verifier,
    /// never in the clear. Fails when the role exists (a host retired keeps its name: its
    /// pieces are still its).
    public static func add(_ name: String, fleetAdministrator: Bool, administrator: SharedCatalogueConfiguration,
                           logger: Logger) async throws -> NewHost {
        guard isValidName(name) else { throw StoreFailure("'\(name)' is not a host name (lower-case letters, digits, _ and -)") }
        let password = ScramVerifier.newPassword()
        let verifier = ScramVerifier.make(password: password, salt: ScramVerifier.randomBytes(16))
        try await asAdministrator(administrator, logger: logger) { connection in
            _ = try await SharedCatalogueSchema.migrate(connection, logger: logger)
            let exists = try await connection.values("SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = \(name))", Bool.self, logger)
            guard exists.first != true else {
                throw StoreFailure("a role \(name) exists already (a host, or a retired one, whose pieces keep its name): choose another name")
            }
            let role = quoted(name)
            try await connection.run("BEGIN", logger)
            do {
                try await connection.run(PostgresQuery(unsafeSQL: "CREATE ROLE \(role) LOGIN PASSWORD \(literal(verifier)) IN ROLE \(SharedCatalogueAccess.hostRole)"), logger)
                if fleetAdministrator {
                    try await connection.run(PostgresQuery(unsafeSQL: "GRANT \(SharedCatalogueAccess.fleetAdministratorRole) TO \(role)"), logger)
                }
                for (setting, value) in SharedCatalogueAccess.sessionSettings {
                    try await connection.run(PostgresQuery(unsafeSQL: "ALTER ROLE \(role) SET \(setting) = \(literal(value))"), logger)
                }
                try await connection.run("COMMIT", logger)
            } catch {
                _ = try? await connection.run("ROLLBACK", logger)
                throw error
            }
        }
        return NewHost(name: name, password: password)
    }

    /// Retires the host `name`: it may log in no more, is no host any longer, and its
    /// sessions are ended. The role stays (and with it the name, which its pieces' authors
    /// bear): a new host cannot take it over.
    public static func remove(_ name: String, administrator: SharedCatalogueConfiguration, logger: Logger) async throws {
        guard isValidName(name) else { throw StoreFailure("'\(name)' is not a host name") }
        try await asAdministrator(administrator, logger: logger) { connection in
            let member = try await connection.values("""
                SELECT EXISTS (SELECT 1 FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.member JOIN pg_roles g ON g.oid = m.roleid
                               WHERE r.rolname = \(name) AND g.rolname = \(SharedCatalogueAccess.hostRole))
                """, Bool.self, logger)
            guard member.first == true else { throw StoreFailure("no host \(name) in this catalogue's server") }
            let role = quoted(name)
            try await connection.run(PostgresQuery(unsafeSQL: "ALTER ROLE \(role) NOLOGIN"), logger)
            try await connection.run(PostgresQuery(unsafeSQL: "REVOKE \(SharedCatalogueAccess.hostRole) FROM \(role)"), logger)
            try await connection.run(PostgresQuery(unsafeSQL: "REVOKE \(SharedCatalogueAccess.fleetAdministratorRole) FROM \(role)"), logger)
            // Its sessions end, where the administrator may end them (a superuser, or a
            // member of pg_signal_backend); those that go on can do nothing any more: every
            // grant and policy is earshot_host's.
            try await connection.run(PostgresQuery(unsafeSQL: """
                DO $$ BEGIN
                    PERFORM pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = \(literal(name));
                EXCEPTION WHEN insufficient_privilege THEN
                    RAISE NOTICE 'the sessions of % go on until they end', \(literal(name));
                END $$
                """), logger)
        }
    }

    /// Refuses a host that logs in as a role the catalogue's rules do not bind (a
    /// superuser, one that bypasses row-level security, the tables' owner) or as no host's
    /// role at all: its identity would be anybody's.
    static func checkRole(_ connection: PostgresConnection, logger: Logger) async throws {
        let rows = try await connection.rows("""
            SELECT r.rolsuper, r.rolbypassrls, pg_has_role(t.tableowner, 'MEMBER'), pg_has_role('\(unescaped: SharedCatalogueAccess.hostRole)', 'MEMBER')
            FROM pg_roles r, pg_tables t WHERE r.rolname = current_user AND t.schemaname = 'public' AND t.tablename = 'piece'
            """, logger)
        guard let (superuser, bypass, owner, host) = try rows.first?.decode((Bool, Bool, Bool, Bool).self) else {
            throw StoreFailure("the catalogue has no piece table")
        }
        if superuser || bypass || owner {
            throw HostRoleRefused("this host logs in as a role the catalogue's rules do not bind ("
                                  + (superuser ? "a superuser" : bypass ? "it bypasses row-level security" : "it owns the catalogue's tables")
                                  + "): give it a role of its own with `earshot-pieces add-host NAME --database ADMIN_URL --password-file FILE`")
        }
        if !host {
            throw HostRoleRefused("this host logs in as a role that is no host of the catalogue (not a member of "
                                  + "\(SharedCatalogueAccess.hostRole)): `earshot-pieces add-host` makes one")
        }
    }

    /// An identifier as SQL writes one.
    static func quoted(_ identifier: String) -> String { "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// A string as an SQL literal.
    static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
}

/// The role this host logs in as is not a host's own.
public struct HostRoleRefused: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
