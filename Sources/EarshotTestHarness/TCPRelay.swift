import EarshotSync
import Foundation
import Glibc

/// A TCP relay on 127.0.0.1 standing for the network between a host and its server: each
/// connection made to `port` is forwarded to `targetPort`. `cut()` makes the path drop
/// everything silently, as a Wi-Fi or cellular link does: nothing is forwarded either way
/// and nothing is closed, so peers see no reset, only silence; `restore()` forwards again.
/// `cut(connectionsExcept:)` silences only the connections open now but one (the others'
/// paths lost, as a NAT forgetting idle flows does), new ones going through.
public final class TCPRelay: Sendable {
    public let port: Int
    private let listener: Int32
    private let isCut = Locked(false)
    private let stopped = Locked(false)
    /// Every socket of the relay's connections, closed by `stop`.
    private let sockets = Locked<[Int32]>([])
    /// Each connection: the local port of its socket to the server (the server's
    /// `pg_stat_activity.client_port` for it), and whether it alone is cut.
    private let connections = Locked<[(serverSidePort: Int, cut: Locked<Bool>)]>([])

    public init(to targetPort: Int) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw HarnessError("cannot make a socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var port = 0
        for _ in 0..<20 {
            let candidate = try PostgresTestServer.freePort()
            if Self.bind(listener, port: candidate) == 0 {
                port = candidate
                break
            }
        }
        guard port != 0, listen(listener, 64) == 0 else {
            close(listener)
            throw HarnessError("cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))")
        }
        self.port = port
        self.listener = listener
        let (isCut, stopped, sockets, connections) = (isCut, stopped, sockets, connections)
        Thread.detachNewThread {
            while !stopped.withLock({ $0 }) {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    break
                }
                let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                guard server >= 0, Self.connect(server, port: targetPort) == 0 else {
                    close(client)
                    if server >= 0 { close(server) }
                    continue
                }
                sockets.withLock { $0 += [client, server] }
                let own = Locked(false)
                connections.withLock { $0.append((Self.localPort(of: server), own)) }
                for (from, to) in [(client, server), (server, client)] {
                    Thread.detachNewThread { Self.pump(from: from, to: to, isCut: isCut, ownCut: own, stopped: stopped) }
                }
            }
        }
    }

    /// Stops forwarding, silently.
    public func cut() { isCut.withLock { $0 = true } }

    /// Forwards again, every connection; what waited in the meantime goes through.
    public func restore() {
        isCut.withLock { $0 = false }
        for connection in connections.withLock({ $0 }) { connection.cut.withLock { $0 = false } }
    }

    /// Silences every connection open now but the one whose socket to the server has the
    /// local port `kept`; connections made from now on go through.
    public func cut(connectionsExcept kept: Int) {
        for connection in connections.withLock({ $0 }) where connection.serverSidePort != kept {
            connection.cut.withLock { $0 = true }
        }
    }

    private static func localPort(of fd: Int32) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return result == 0 ? Int(UInt16(bigEndian: address.sin_port)) : 0
    }

    /// Closes the listener and every connection.
    public func stop() {
        stopped.withLock { $0 = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        let all = sockets.withLock { $0 }
        for fd in all { shutdown(fd, Int32(SHUT_RDWR)) }
        // The pumps see the shut sockets within a poll, then the descriptors go.
        usleep(100_000)
        for fd in all { close(fd) }
    }

    /// Copies `from` to `to` while the path is not cut; while it is, reads nothing (the
    /// bytes wait in the kernel). Ends, closing both, when either side closes.
    private static func pump(from: Int32, to: Int32, isCut: Locked<Bool>, ownCut: Locked<Bool>, stopped: Locked<Bool>) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        defer {
            shutdown(to, Int32(SHUT_WR))
            shutdown(from, Int32(SHUT_RD))
        }
        func cut() -> Bool { isCut.withLock { $0 } || ownCut.withLock { $0 } }
        while !stopped.withLock({ $0 }) {
            if cut() {
                usleep(20_000)
                continue
            }
            var poller = pollfd(fd: from, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) >= 0 else { return }
            if poller.revents == 0 { continue }
            // A cut made while waiting: leave what came where it is.
            if cut() { continue }
            let count = read(from, &buffer, buffer.count)
            if count <= 0 { return }
            var written = 0
            while written < count {
                // A peer gone: EPIPE, not a SIGPIPE that would end the test process.
                let result = buffer.withUnsafeBytes { send(to, $0.baseAddress! + written, count - written, Int32(MSG_NOSIGNAL)) }
                if result <= 0 { return }
                written += result
            }
        }
    }

    private static func address(_ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    private static func bind(_ fd: Int32, port: Int) -> Int32 {
        var address = address(port)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    private static func connect(_ fd: Int32, port: Int) -> Int32 {
        var address = address(port)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}
