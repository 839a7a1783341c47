import CFileAccess
import Glibc

/// Files that callers name (`…Path` keys, `Export…` paths, FILE chunks), opened with the
/// caller's rights: the kernel decides as the caller would, and a file made belongs to the
/// caller. How, by what the service may do:
/// - the caller is the service's own user (the session bus): the service opens it;
/// - an `earshot-open-as` helper listens (a sandboxed system service, which may not take
///   another identity and cannot see homes or /tmp): the helper opens it as the caller and
///   passes the descriptor back, once the system bus has confirmed that the caller's
///   connection runs as that user (a service cannot have it act for anyone else);
/// - otherwise the opening thread takes the caller's identity for the open (a service
///   running as root), or the open is refused with `EPERM`.
///
/// Only regular files are opened; a FIFO or device gives `EINVAL`.
public enum CallerFiles {
    /// Where the helper listens: `$EARSHOT_OPEN_AS_SOCKET`, else `/run/earshot/open-as`.
    public static var helperSocket: String {
        if let path = getenv("EARSHOT_OPEN_AS_SOCKET"), path.pointee != 0 { return String(cString: path) }
        return EARSHOT_OPEN_AS_SOCKET
    }

    /// Opens `path` as the user `uid` would (`flags` as for open(2): read, or write with
    /// create, exclusive, truncate and no-follow), for the call from `caller` (its unique
    /// bus name) that named it: the helper acts as `uid` only when the bus says `caller`
    /// runs as `uid`. The descriptor, or the errno value that says why not.
    public static func open(_ path: String, flags: Int32, mode: mode_t = 0o644, as uid: uid_t, caller: String) -> Result<Int32, Errno> {
        guard path.hasPrefix("/") else { return .failure(Errno(EINVAL)) }
        if uid == geteuid() { return checked(Glibc.open(path, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, mode)) }
        if uid != 0, access(helperSocket, F_OK) == 0 {
            let fd = earshot_open_through_helper(helperSocket, uid, caller, path, flags, mode)
            if fd >= 0 { return .success(fd) }
            if -fd != EHOSTUNREACH { return .failure(Errno(-fd)) }
        }
        let fd = earshot_open_as_user(path, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, mode, uid)
        return fd >= 0 ? checked(fd) : .failure(Errno(-fd))
    }

    /// A descriptor opened here (not non-blocking once checked), if it is a regular file.
    private static func checked(_ fd: Int32) -> Result<Int32, Errno> {
        guard fd >= 0 else { return .failure(Errno(errno)) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            return .failure(Errno(EINVAL))
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return .success(fd)
    }

    /// An errno value and the system's words for it.
    public struct Errno: Error, Sendable, Equatable, CustomStringConvertible {
        public let code: Int32
        public init(_ code: Int32) { self.code = code }
        public var description: String {
            switch code {
            case EINVAL: "not a regular file"
            case ENOTSUP: "this service may not act as that user here (no earshot-open-as listens at \(CallerFiles.helperSocket))"
            case ESRCH: "no such user"
            default: String(cString: strerror(code))
            }
        }
        /// The caller may not do that (permissions, a read-only file system), or the service
        /// may not act as the caller.
        public var isDenied: Bool { [EACCES, EPERM, EROFS, ENOTSUP].contains(code) }
    }
}
