import Foundation
import Glibc

/// Certificates for TLS tests and benchmarks, made with openssl: a certificate authority
/// (`ca.pem`), a server certificate it signs for `localhost` (`server.pem`, `server.key`,
/// handed to the PostgreSQL server's user), and another authority (`other-ca.pem`).
public enum TestCertificates {
    public static func make(in directory: URL) async throws {
        func run(_ arguments: [String]) async throws { _ = try await ToolRun.run(["openssl"] + arguments) }
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        for authority in ["ca", "other-ca"] {
            try await run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("\(authority).key"), "-out", path("\(authority).pem"),
                           "-days", "2", "-subj", "/CN=Earshot test \(authority)"])
        }
        try "subjectAltName=DNS:localhost\n".write(toFile: path("server.ext"), atomically: true, encoding: .utf8)
        try await run(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", path("server.key"), "-out", path("server.csr"),
                       "-subj", "/CN=localhost"])
        try await run(["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"), "-CAcreateserial",
                       "-out", path("server.pem"), "-days", "2", "-extfile", path("server.ext")])
        for name in ["server.key", "server.pem"] { try PostgresTestServer.giveToServer(directory.appendingPathComponent(name)) }
        for name in ["ca.pem", "other-ca.pem"] { chmod(path(name), 0o644) }
    }
}

extension PostgresTestServer {
    /// A server that takes TLS (and plain) connections, its certificate signed by
    /// `data/ca.pem` for `localhost`.
    public static func startWithTLS() async throws -> PostgresTestServer {
        try await start(settings: ["ssl=on", "ssl_cert_file=server.pem", "ssl_key_file=server.key"]) { directory in
            try await TestCertificates.make(in: directory.appendingPathComponent("data"))
        }
    }

    /// The certificate authority of a `startWithTLS` server.
    public var certificateAuthority: String { directory.appendingPathComponent("data/ca.pem").path }
}
