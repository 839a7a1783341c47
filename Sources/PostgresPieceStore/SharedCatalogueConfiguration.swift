import Foundation

/// Where a shared catalogue is: a PostgreSQL server, its user and database, and how this
/// host names itself there.
public struct SharedCatalogueConfiguration: Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String
    public var database: String
    /// From `$PGPASSWORD` or a password file; never from the URL.
    public var password: String?
    /// This host's name: authors of pieces dropped here are `user@hostName`.
    public var hostName: String

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    /// `postgresql://user@host:port/database` (or `postgres://`); the port defaults to
    /// 5432 and the database to the user's name.
    public init(url text: String, password: String?, hostName: String) throws(Invalid) {
        guard let url = URLComponents(string: text), let scheme = url.scheme, ["postgresql", "postgres"].contains(scheme) else {
            throw Invalid(description: "'\(text)' is not a postgresql://user@host:port/database URL")
        }
        guard url.password == nil else {
            throw Invalid(description: "a password in the URL would be visible to every local user: use $PGPASSWORD or --database-password-file")
        }
        guard let user = url.user, !user.isEmpty else { throw Invalid(description: "'\(text)' names no user (postgresql://user@host/database)") }
        guard let host = url.host, !host.isEmpty else { throw Invalid(description: "'\(text)' names no host") }
        guard url.query == nil, url.fragment == nil else { throw Invalid(description: "'\(text)': options in the URL are not supported") }
        let path = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        guard !path.contains("/") else { throw Invalid(description: "'\(text)': the path must be a database name") }
        self.host = host
        self.port = url.port ?? 5432
        self.user = user.removingPercentEncoding ?? user
        self.database = path.isEmpty ? self.user : (path.removingPercentEncoding ?? path)
        self.password = password
        self.hostName = hostName
    }

    /// The URL without a password, for logs.
    public var description: String { "postgresql://\(user)@\(host):\(port)/\(database)" }
}
