import CallerFiles
import EarshotDBus
import Glibc

/// Paths clients name (`…Path` keys, `Export…`), opened with the caller's rights
/// (`CallerFiles`): what the caller could not open itself is refused.
enum FileAccess {
    /// Opens `path` for reading as the caller would.
    static func openForReading(_ path: String, field: String, caller: CallerIdentity) throws(DBusError) -> Int32 {
        guard path.hasPrefix("/") else { throw .invalidArgs("\(field): '\(path)' is not an absolute path") }
        switch CallerFiles.open(path, flags: O_RDONLY, as: caller.uid, caller: caller.uniqueName) {
        case .success(let fd):
            return fd
        case .failure(let error) where error.code == EINVAL:
            throw .invalidArgs("\(field): \(path) is not a regular file")
        case .failure(let error) where error.isDenied:
            throw .earshot(.disallowed, "\(field): \(caller.userName) may not read \(path): \(error)")
        case .failure(let error):
            throw .earshot(.fileNotFound, "\(field): cannot open \(path): \(error)")
        }
    }

    /// Creates (or truncates) `path` for writing as the caller would; a file made belongs
    /// to the caller.
    static func createForWriting(_ path: String, caller: CallerIdentity) throws(DBusError) -> Int32 {
        guard path.hasPrefix("/") else { throw .invalidArgs("path: '\(path)' is not an absolute path") }
        switch CallerFiles.open(path, flags: O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: 0o644, as: caller.uid, caller: caller.uniqueName) {
        case .success(let fd):
            return fd
        case .failure(let error) where error.isDenied:
            throw .earshot(.disallowed, "path: \(caller.userName) may not write \(path): \(error)")
        case .failure(let error):
            throw .failed("path: cannot create \(path): \(error)")
        }
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
