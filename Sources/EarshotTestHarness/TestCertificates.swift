import Foundation
import Glibc

/// Certificates for TLS tests and benchmarks, made with openssl: a certificate authority
/// (`ca.pem`), a server certificate it signs for `localhost` and `addresses` (`server.pem`,
/// `server.key`, handed to the PostgreSQL server's user), and another authority
/// (`other-ca.pem`).
public enum TestCertificates {
    public static func make(in directory: URL, addresses: [String] = []) async throws {
        func run(_ arguments: [String]) async throws { _ = try await ToolRun.run(["openssl"] + arguments) }
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        for authority in ["ca", "other-ca"] {
            try await run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("\(authority).key"), "-out", path("\(authority).pem"),
                           "-days", "2", "-subj", "/CN=Earshot test \(authority)"])
        }
        let names = (["DNS:localhost"] + addresses.map { "IP:\($0)" }).joined(separator: ",")
        try "subjectAltName=\(names)\n".write(toFile: path("server.ext"), atomically: true, encoding: .utf8)
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
    /// `data/ca.pem` for `localhost` and `addresses` (which it listens on as well).
    public static func startWithTLS(addresses: [String] = []) async throws -> PostgresTestServer {
        let listen = addresses.isEmpty ? [] : ["listen_addresses=" + (["127.0.0.1"] + addresses).joined(separator: ",")]
        return try await start(settings: ["ssl=on", "ssl_cert_file=server.pem", "ssl_key_file=server.key"] + listen) { directory in
            try await TestCertificates.make(in: directory.appendingPathComponent("data"), addresses: addresses)
        }
    }

    /// This machine's first IPv4 address that is not a loopback one, if it has any.
    public static func externalAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let ok = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 -> Bool in
                var raw = ipv4.pointee.sin_addr
                return inet_ntop(AF_INET, &raw, &text, socklen_t(text.count)) != nil
            }
            let name = String(cString: text)
            if ok, !name.hasPrefix("127.") { return name }
        }
        return nil
    }

    /// The certificate authority of a `startWithTLS` server.
    public var certificateAuthority: String { directory.appendingPathComponent("data/ca.pem").path }
}
