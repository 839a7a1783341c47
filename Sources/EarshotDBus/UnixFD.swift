import Glibc

/// An owned UNIX file descriptor.
///
/// The descriptor is closed exactly once: when the last reference goes away, or earlier by
/// `close()`. `take()` hands ownership to the caller, after which this object closes nothing.
/// Descriptors received in messages arrive as `UnixFD`s (libdbus gives us a duplicate that we
/// own); sending one duplicates it, so the sender keeps its own.
public final class UnixFD: Sendable, CustomStringConvertible {
    private let state: Locked<Int32?>

    /// Takes ownership of `fd`.
    public init(taking fd: Int32) {
        state = Locked(fd >= 0 ? fd : nil)
    }

    /// Duplicates `fd` (close-on-exec); the caller keeps its own descriptor.
    public init(duplicating fd: Int32) throws(DBusError) {
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else {
            throw .invalidArgs("cannot duplicate file descriptor \(fd): \(String(cString: strerror(errno)))")
        }
        state = Locked(copy)
    }

    /// The descriptor, or nil once closed or taken. Valid only while this object owns it.
    public var rawValue: Int32? { state.withLock { $0 } }

    /// Gives up ownership: the caller must close the returned descriptor.
    public func take() -> Int32? {
        state.withLock { fd in
            defer { fd = nil }
            return fd
        }
    }

    /// Closes the descriptor now; later calls do nothing.
    public func close() {
        if let fd = take() { _ = Glibc.close(fd) }
    }

    deinit {
        if let fd = state.withLock({ $0 }) { _ = Glibc.close(fd) }
    }

    public var description: String {
        if let fd = rawValue { "fd(\(fd))" } else { "fd(closed)" }
    }
}
