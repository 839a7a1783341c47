import EarshotDBus
import Glibc

/// Paths clients name (`…Path` keys, `Export…`), opened with the caller's rights in mind:
/// on the system bus the service refuses what the caller's uid could not open itself.
enum FileAccess {
    /// Opens `path` for reading; with `checkPermissions`, only when the caller owns it and
    /// may read it, it is world-readable, or the caller is root.
    static func openForReading(_ path: String, field: String, caller: CallerIdentity, checkPermissions: Bool) throws(DBusError) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .earshot("FileNotFound", "\(field): cannot open \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw .invalidArgs("\(field): \(path) is not a regular file")
        }
        if checkPermissions, caller.uid != 0 {
            let ownerMay = info.st_uid == caller.uid && info.st_mode & S_IRUSR != 0
            let anyoneMay = info.st_mode & S_IROTH != 0
            guard ownerMay || anyoneMay else {
                close(fd)
                throw .earshot("Disallowed", "\(field): \(caller.userName) may not read \(path)")
            }
        }
        return fd
    }

    /// Creates (or truncates) `path` for writing; with `checkPermissions`, only inside a
    /// directory the caller owns (or as root), and the file then belongs to the caller.
    static func createForWriting(_ path: String, caller: CallerIdentity, checkPermissions: Bool) throws(DBusError) -> Int32 {
        guard path.hasPrefix("/") else { throw .invalidArgs("path: '\(path)' is not an absolute path") }
        if checkPermissions, caller.uid != 0 {
            let directory = String(path[..<path.lastIndex(of: "/")!])
            var info = stat()
            guard stat(directory.isEmpty ? "/" : directory, &info) == 0, info.st_uid == caller.uid, info.st_mode & S_IWUSR != 0 else {
                throw .earshot("Disallowed", "path: \(caller.userName) may not write into \(directory)")
            }
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else {
            throw .failed("path: cannot create \(path): \(String(cString: strerror(errno)))")
        }
        if checkPermissions, getuid() == 0 { _ = fchown(fd, caller.uid, gid_t(bitPattern: -1)) }
        return fd
    }

    /// Copies the whole file `source` into `destination` (an open descriptor) and syncs it.
    static func copy(from source: String, to destination: Int32) throws(DBusError) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw .failed("cannot open \(source): \(String(cString: strerror(errno)))") }
        defer { close(input) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(input, buffer.baseAddress, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .failed("cannot read \(source): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            var written = 0
            while written < count {
                let result = write(destination, buffer.baseAddress! + written, count - written)
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { throw .failed("cannot write the export: \(String(cString: strerror(errno)))") }
                written += result
            }
        }
        guard fsync(destination) == 0 else { throw .failed("cannot sync the export: \(String(cString: strerror(errno)))") }
    }
}
