import EarshotTestHarness
import Glibc

/// What the page cache holds of a process's files, for starts measured cold: a head unit's
/// first start after boot, or after the kernel reclaimed the pages of files no process maps
/// (as this machine's does after a minute unused), reads its executable and libraries from
/// disk.
enum PageCache {
    /// Every file `pid` maps (its executable and libraries), each once; empty when it has
    /// gone.
    static func mappedFiles(of pid: pid_t) -> [String] {
        var seen = Set<String>()
        return ((try? ServiceProcess.mappedFiles(of: pid)) ?? []).filter { seen.insert($0).inserted }
    }

    /// Drops the cached pages of each of `paths` (`POSIX_FADV_DONTNEED`). Pages that a
    /// running process maps stay, as they do when the kernel reclaims memory: only what no
    /// process maps is read again. Returns the files it could open.
    @discardableResult
    static func evict(_ paths: [String]) -> Int {
        paths.reduce(0) { count, path in
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return count }
            defer { close(fd) }
            return posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0 ? count + 1 : count
        }
    }
}
