import Foundation
import Glibc

/// Where a shared catalogue is: a PostgreSQL server, the role this host logs in as (which is
/// its identity there: its name in authors, `user@role`), the database, and how the
/// connection is secured.
public struct SharedCatalogueConfiguration: Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String
    public var database: String
    /// From `$PGPASSWORD` or a password file; never from the URL.
    public var password: String?
    /// This host's name, the role it logs in as: authors of pieces dropped here are
    /// `user@hostName`, and the database decides by that role what the host may do.
    public var hostName: String { user }
    /// TLS, as libpq's `sslmode` says.
    public var sslMode: SSLMode
    /// The certificate authorities a server's certificate is checked against (PEM), as
    /// libpq's `sslrootcert`; nil: the system's.
    public var sslRootCertificate: String?
    /// User names of this host who may delete any piece of the catalogue, whichever host it
    /// was dropped on (`--fleet-admin`); nobody unless configured.
    public var fleetAdministrators: Set<String> = []
    /// The most bytes of objects this host keeps (`--cache-size`).
    public var cacheBytes: UInt64 = Self.defaultCacheBytes
    public static let defaultCacheBytes: UInt64 = 2 << 30

    /// libpq's `sslmode`, the modes that protect something.
    public enum SSLMode: String, Sendable, CaseIterable {
        /// Plain TCP.
        case disable
        /// TLS, the server's certificate not checked.
        case require
        /// TLS, the certificate signed by a trusted authority.
        case verifyCA = "verify-ca"
        /// TLS, the certificate signed by a trusted authority and naming the host.
        case verifyFull = "verify-full"
    }

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    /// `postgresql://user@host:port/database?sslmode=…&sslrootcert=FILE` (or `postgres://`);
    /// the port defaults to 5432, the database to the user's name, `sslmode` to `disable` on
    /// the loopback (`localhost`, 127.0.0.0/8, ::1) and to `verify-full` on any other host.
    public init(url text: String, password: String?) throws(Invalid) {
        guard let url = URLComponents(string: text), let scheme = url.scheme, ["postgresql", "postgres"].contains(scheme) else {
            throw Invalid(description: "'\(text)' is not a postgresql://user@host:port/database URL")
        }
        guard url.password == nil else {
            throw Invalid(description: "a password in the URL would be visible to every local user: use $PGPASSWORD or --database-password-file")
        }
        guard let user = url.user, !user.isEmpty else { throw Invalid(description: "'\(text)' names no user (postgresql://user@host/database)") }
        guard let host = url.host, !host.isEmpty else { throw Invalid(description: "'\(text)' names no host") }
        guard url.fragment == nil else { throw Invalid(description: "'\(text)': a URL fragment means nothing here") }
        let path = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        guard !path.contains("/") else { throw Invalid(description: "'\(text)': the path must be a database name") }
        var mode: SSLMode?
        var rootCertificate: String?
        for item in url.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let value = item.value.flatMap(SSLMode.init(rawValue:)) else {
                    throw Invalid(description: "sslmode=\(item.value ?? ""): one of "
                                  + SSLMode.allCases.map(\.rawValue).joined(separator: ", "))
                }
                mode = value
            case "sslrootcert":
                guard let value = item.value, value.hasPrefix("/") else {
                    throw Invalid(description: "sslrootcert=\(item.value ?? ""): an absolute path to PEM certificates")
                }
                rootCertificate = value
            default:
                throw Invalid(description: "'\(item.name)' is not an option earshot-pieces takes (sslmode, sslrootcert)")
            }
        }
        self.host = host
        self.port = url.port ?? 5432
        self.user = user.removingPercentEncoding ?? user
        self.database = path.isEmpty ? self.user : (path.removingPercentEncoding ?? path)
        self.password = password
        self.sslMode = mode ?? (Self.isLoopback(host) ? .disable : .verifyFull)
        self.sslRootCertificate = rootCertificate
        if self.sslMode == .disable, rootCertificate != nil {
            throw Invalid(description: "sslrootcert is of no use with sslmode=disable")
        }
    }

    /// `localhost`, an address of 127.0.0.0/8, or ::1 (IPv4's loopback mapped into IPv6
    /// too): this machine, where the network is not a threat. Addresses are parsed, not
    /// compared as text (`127.example.net` is a name like any other).
    public static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var v4 = in_addr()
        if inet_pton(AF_INET, bare, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, bare, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
        // ::ffff:127.x.y.z
        return bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff && bytes[12] == 127
    }

    /// Whether `host` is a numeric address (IPv4, or IPv6 with or without brackets), not a name.
    public static func isAddress(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, bare, &v4) == 1 || inet_pton(AF_INET6, bare, &v6) == 1
    }

    /// The URL without a password, for logs.
    public var description: String {
        "postgresql://\(user)@\(host):\(port)/\(database)" + (sslMode == .disable ? "" : "?sslmode=\(sslMode.rawValue)")
    }
}
