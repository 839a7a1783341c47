import EarshotSync
import Foundation
import Glibc

/// earshot-open-as as systemd runs it (earshot-open-as.socket with `Accept=yes`), for tests
/// whose services run as an unprivileged user on a system-type bus: a SOCK_SEQPACKET socket
/// that only root and `user`'s group may use, each connection starting the helper as `user`
/// with CAP_SETUID and CAP_SETGID as ambient capabilities, the connection as its input,
/// and `busAddress` as its system bus (where it asks who a caller is).
public final class OpenAsHelper: Sendable {
    public let socketPath: String
    private let listener: Int32
    private let logPath: String
    private let stopped = Locked(false)
    /// Helpers started and not yet reaped.
    private let children = Locked<[ChildProcess]>([])

    public init(directory: URL, user: String, busAddress: String) throws {
        guard let identity = TestUser.lookup(user) else { throw HarnessError("no user \(user)") }
        let socketPath = directory.appendingPathComponent("open-as").path
        let listener = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw HarnessError("cannot make a socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: Array(socketPath.utf8.prefix(buffer.count - 1)))
        }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0, chown(socketPath, 0, identity.gid) == 0, chmod(socketPath, 0o660) == 0 else {
            close(listener)
            throw HarnessError("cannot listen on \(socketPath): \(String(cString: strerror(errno)))")
        }
        self.socketPath = socketPath
        self.listener = listener
        let logPath = directory.appendingPathComponent("earshot-open-as.log").path
        self.logPath = logPath
        let helper = ServiceProcess.productsDirectory.appendingPathComponent("earshot-open-as").path
        let command = ["/usr/bin/setpriv", "--reuid=\(identity.uid)", "--regid=\(identity.gid)", "--init-groups",
                       "--inh-caps=+setuid,+setgid", "--ambient-caps=+setuid,+setgid", "--", helper]
        let (stopped, children) = (stopped, children)
        Thread.detachNewThread {
            while !stopped.withLock({ $0 }) {
                let connection = accept(listener, nil, nil)
                if connection < 0 {
                    if errno == EINTR { continue }
                    break
                }
                _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                let child = try? ChildProcess(command, environment: ["DBUS_SYSTEM_BUS_ADDRESS": busAddress], stdin: connection,
                                              logPath: logPath)
                close(connection)
                children.withLock { list in
                    list.removeAll { !$0.isRunning }
                    if let child { list.append(child) }
                }
            }
        }
    }

    /// What the helpers wrote (their refusals).
    public var logText: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    public func stop() {
        stopped.withLock { $0 = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        unlink(socketPath)
        for child in children.withLock({ $0 }) { child.stop(grace: .milliseconds(200)) }
    }
}
