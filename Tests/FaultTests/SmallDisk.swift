import EarshotTestHarness
import Foundation
import Glibc

/// A small file system of its own for a piece store: a tmpfs of a given size, mounted on a
/// new directory with `mount -t tmpfs` (root, or CAP_SYS_ADMIN, is needed), unmounted and
/// removed by `release()`.
struct SmallDisk {
    let directory: URL

    /// Whether this process may mount a tmpfs (found out once, by trying).
    static let canMount: Bool = {
        guard let directory = try? makeDirectory() else { return false }
        defer { rmdir(directory.path) }
        let mounted = run(["/bin/mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", directory.path]) == 0
        if mounted { _ = run(["/bin/umount", directory.path]) }
        return mounted
    }()

    /// Mounts a tmpfs of `bytes` on a new directory.
    static func mount(bytes: Int) throws -> SmallDisk {
        let directory = try makeDirectory()
        guard run(["/bin/mount", "-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", directory.path]) == 0 else {
            rmdir(directory.path)
            throw HarnessError("cannot mount a tmpfs on \(directory.path)")
        }
        return SmallDisk(directory: directory)
    }

    /// Unmounts (lazily, should a service still hold a file) and removes the directory.
    func release() {
        _ = Self.run(["/bin/umount", "-l", directory.path])
        rmdir(directory.path)
    }

    /// Free bytes, as a service writing there sees them.
    var availableBytes: Int {
        var info = statvfs()
        guard statvfs(directory.path, &info) == 0 else { return 0 }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    /// Fills the disk with `name` until only `leaving` bytes are free (0: until a write
    /// fails with ENOSPC); returns the file.
    @discardableResult
    func fill(_ name: String, leaving: Int = 0) throws -> URL {
        let url = directory.appendingPathComponent(name)
        let fd = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw HarnessError("cannot create \(url.path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x5a, count: 4096)
        while availableBytes > leaving {
            let wanted = min(chunk.count, availableBytes - leaving)
            let written = chunk.withUnsafeBytes { write(fd, $0.baseAddress, wanted) }
            if written < 0 {
                if errno == ENOSPC { break }
                throw HarnessError("cannot fill \(url.path): \(String(cString: strerror(errno)))")
            }
        }
        return url
    }

    private static func makeDirectory() throws -> URL {
        var template = Array((NSTemporaryDirectory() + "/earshot-small-disk.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw HarnessError("mkdtemp: \(String(cString: strerror(errno)))") }
        return URL(fileURLWithPath: String(cString: made))
    }

    /// Runs a command to its end (output to /dev/null); returns its exit status.
    private static func run(_ arguments: [String]) -> Int32 {
        guard let child = try? ChildProcess(arguments, environment: ProcessInfo.processInfo.environment, logPath: "/dev/null") else {
            return -1
        }
        return child.waitForExitBlocking(timeout: .seconds(10)) ?? -1
    }
}
