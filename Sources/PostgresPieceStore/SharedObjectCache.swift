import EarshotMedia
import EarshotSync
import Foundation
import Glibc
import Logging
import PieceStore

/// The objects a host keeps of a shared catalogue (`shared-cache/objects`), bounded: past
/// `limit` bytes, the objects used longest ago go first (a use touches the file's time).
/// A cached object is hashed again the first time it is used after a start, so that a file
/// damaged on the host's disk is fetched again rather than delivered.
final class SharedObjectCache: Sendable {
    let files: ObjectStore
    let limit: UInt64
    let logger: Logger
    private struct State {
        var total: UInt64 = 0
        /// Objects checked against their hash since this start.
        var verified: Set<String> = []
    }
    private let state = Locked(State())

    init(files: ObjectStore, limit: UInt64, logger: Logger) {
        self.files = files
        self.limit = limit
        self.logger = logger
    }

    /// Counts what the cache holds (after the start's sweep).
    func measure() {
        let total = entries().reduce(0) { $0 + $1.size }
        state.withLock { $0.total = total }
    }

    /// The cached object's path when it is there and sound; a damaged one is removed
    /// (the caller fetches it again). Each use makes it the most recent.
    func lookUp(_ asset: StoredAsset) -> String? {
        let path = files.path(of: asset.hash)
        guard access(path, R_OK) == 0 else { return nil }
        if !state.withLock({ $0.verified.contains(asset.hash) }) {
            guard let found = Self.hash(path), found.hash == asset.hash, found.size == asset.size else {
                logger.warning("the cached copy of object \(asset.hash) is damaged; it is fetched again")
                remove(asset.hash, path: path)
                return nil
            }
            state.withLock { _ = $0.verified.insert(asset.hash) }
        }
        utimensat(AT_FDCWD, path, nil, 0)
        return path
    }

    /// Counts an object just put in the cache (fetched, or dropped or transcoded here and
    /// so hashed on the way), then makes room: the objects used longest ago go until the
    /// cache is within its limit, `hash` itself last of all.
    func admitted(_ hash: String, size: UInt64) {
        state.withLock { state in
            state.total += size
            state.verified.insert(hash)
        }
        guard state.withLock({ $0.total }) > limit else { return }
        for entry in entries().sorted(by: { $0.used < $1.used }) where entry.hash != hash {
            guard state.withLock({ $0.total }) > limit else { return }
            remove(entry.hash, path: entry.path)
        }
    }

    /// Removes a cached object and stops counting it.
    private func remove(_ hash: String, path: String) {
        var info = stat()
        guard stat(path, &info) == 0, unlink(path) == 0 else { return }
        state.withLock { state in
            state.total -= min(state.total, UInt64(info.st_size))
            state.verified.remove(hash)
        }
    }

    /// Every cached object: its hash, path, size and when it was last used.
    private func entries() -> [(hash: String, path: String, size: UInt64, used: Int)] {
        var found: [(String, String, UInt64, Int)] = []
        let objects = files.directory.appendingPathComponent("objects").path
        let manager = FileManager.default
        for shard in (try? manager.contentsOfDirectory(atPath: objects)) ?? [] {
            for name in (try? manager.contentsOfDirectory(atPath: objects + "/" + shard)) ?? [] {
                let path = objects + "/" + shard + "/" + name
                var info = stat()
                guard stat(path, &info) == 0 else { continue }
                found.append((name, path, UInt64(info.st_size), info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec))
            }
        }
        return found
    }

    /// The SHA-256 and size of the file at `path`, or nil when it cannot be read.
    static func hash(_ path: String) -> (hash: String, size: UInt64)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var hasher = SHA256Hasher()
        var size: UInt64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            size += UInt64(count)
        }
        return (hasher.finalize(), size)
    }
}
