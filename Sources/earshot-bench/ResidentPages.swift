import Foundation
import Glibc

/// Which pages of an executable's own file mappings a running process has resident, as
/// addresses in the executable's ELF address space (where its symbols are), from
/// /proc/PID/maps and /proc/PID/pagemap.
struct ResidentPages: Sendable {
    static let pageSize = UInt64(sysconf(Int32(_SC_PAGESIZE)))

    /// Page numbers (ELF address / page size).
    let pages: Set<UInt64>

    /// The pages of `executable` that `pid` has resident now.
    static func of(_ executable: String, in pid: pid_t) throws -> ResidentPages {
        let file = URL(fileURLWithPath: executable).resolvingSymlinksInPath().path
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        var ranges: [(start: UInt64, end: UInt64)] = []
        for line in maps.split(separator: "\n") {
            // start-end perms offset dev inode path
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[5].trimmingCharacters(in: .whitespaces) == file else { continue }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt64(bounds[0], radix: 16), let end = UInt64(bounds[1], radix: 16) else { continue }
            ranges.append((start, end))
        }
        // A position-independent executable's first segment maps file offset 0 at ELF
        // address 0: the lowest mapping is the load base.
        guard let base = ranges.map(\.start).min() else {
            throw BenchmarkError("process \(pid) has no mapping of \(file)")
        }
        let pagemap = open("/proc/\(pid)/pagemap", O_RDONLY | O_CLOEXEC)
        guard pagemap >= 0 else { throw BenchmarkError("/proc/\(pid)/pagemap: \(String(cString: strerror(errno)))") }
        defer { close(pagemap) }
        var pages = Set<UInt64>()
        for range in ranges {
            let count = Int((range.end - range.start) / pageSize)
            var entries = [UInt64](repeating: 0, count: count)
            let wanted = count * 8
            let read = entries.withUnsafeMutableBytes { pread(pagemap, $0.baseAddress, wanted, off_t(range.start / pageSize * 8)) }
            guard read == wanted else { throw BenchmarkError("/proc/\(pid)/pagemap: short read") }
            for (index, entry) in entries.enumerated() where entry & (3 << 62) != 0 {  // present or swapped
                pages.insert((range.start - base) / pageSize + UInt64(index))
            }
        }
        return ResidentPages(pages: pages)
    }
}

/// Makes the page cache forget a file (it must not be mapped by anyone), so that the next
/// process to run it reads only the pages it touches when read-ahead is off.
func dropFromPageCache(_ path: String) throws {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw BenchmarkError("\(path): \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    // Pages still to be written (a binary just linked) stay cached until they are.
    guard fsync(descriptor) == 0 else { throw BenchmarkError("fsync(\(path)): \(String(cString: strerror(errno)))") }
    let result = posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
    guard result == 0 else { throw BenchmarkError("posix_fadvise(\(path)): \(String(cString: strerror(result)))") }
}
