import EarshotMedia
import Foundation
import Glibc

/// Asset bytes as content-addressed files: `objects/ab/abcdef…` named by their SHA-256.
///
/// New bytes are streamed into `tmp/` while they are hashed, fsynced, and renamed into
/// place (then the directory is fsynced) before any metadata names them; a file nobody
/// names is removed by the sweep at start.
public struct ObjectStore: Sendable {
    public let directory: URL
    var objects: URL { directory.appendingPathComponent("objects") }
    var temporary: URL { directory.appendingPathComponent("tmp") }

    /// Bytes read and written per step.
    static let chunkSize = 1 << 20

    public init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: objects, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
    }

    /// A file in `tmp/` holding streamed bytes, not yet an object.
    public struct Staged: Sendable {
        public let path: String
        public let hash: String
        public let size: UInt64

        public init(path: String, hash: String, size: UInt64) {
            self.path = path
            self.hash = hash
            self.size = size
        }
    }

    public enum IngestError: Error, Sendable {
        case tooLarge(limit: UInt64)
        /// The file system has no more room for it (see `StorageSpace.isExhaustion`): the
        /// system's words, e.g. "No space left on device".
        case noSpace(String)
        case io(String)
    }

    /// `.noSpace` with the system's text for `code` when it says the file system is out of
    /// room, else `.io` with "`what`: that text".
    static func failure(_ what: String, code: Int32) -> IngestError {
        let text = String(cString: strerror(code))
        return StorageSpace.isExhaustion(code) ? .noSpace(text) : .io("\(what): \(text)")
    }

    /// Streams everything `fd` gives (from its current offset) into a staged file,
    /// hashing on the way; at most `limit` bytes.
    public func stage(from fd: Int32, limit: UInt64) throws(IngestError) -> Staged {
        let path = temporary.appendingPathComponent(UUID().uuidString).path
        let out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard out >= 0 else { throw Self.failure("cannot create \(path)", code: errno) }
        var hasher = SHA256Hasher()
        var size: UInt64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        func fail(_ error: IngestError) -> IngestError {
            close(out)
            unlink(path)
            return error
        }
        while true {
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw fail(.io("cannot read the asset: \(String(cString: strerror(errno)))"))
            }
            if count == 0 { break }
            size += UInt64(count)
            if size > limit { throw fail(.tooLarge(limit: limit)) }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            hasher.update(chunk)
            var written = 0
            while written < count {
                let result = write(out, chunk.baseAddress! + written, count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    throw fail(Self.failure("cannot write \(path)", code: errno))
                }
                written += result
            }
        }
        guard fsync(out) == 0 else { throw fail(Self.failure("cannot fsync \(path)", code: errno)) }
        close(out)
        return Staged(path: path, hash: hasher.finalize(), size: size)
    }

    /// A new empty staged path for a file another writer produces (a transcode).
    public func stagingPath(extension ext: String) -> String {
        temporary.appendingPathComponent(UUID().uuidString + "." + ext).path
    }

    /// Makes a staged file an object (or drops it when the object exists already); true
    /// when the object is new.
    @discardableResult
    public func commit(_ staged: Staged) throws(IngestError) -> Bool {
        let target = path(of: staged.hash)
        let shard = (target as NSString).deletingLastPathComponent
        if mkdir(shard, 0o755) != 0, errno != EEXIST {
            throw Self.failure("cannot create \(shard)", code: errno)
        }
        if access(target, F_OK) == 0 {
            unlink(staged.path)
            return false
        }
        guard rename(staged.path, target) == 0 else { throw .io("cannot move \(staged.path) to \(target): \(String(cString: strerror(errno)))") }
        Self.syncDirectory(shard)
        return true
    }

    /// Stages a file someone else wrote in `tmp/` (a transcode) where it lies: hashes it and
    /// makes it durable, without a copy (which would need its size again in free space).
    /// On failure the file is removed.
    public func stage(writtenAt path: String) throws(IngestError) -> Staged {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let error = Self.failure("cannot open \(path)", code: errno)
            unlink(path)
            throw error
        }
        defer { close(fd) }
        func fail(_ error: IngestError) -> IngestError {
            unlink(path)
            return error
        }
        var hasher = SHA256Hasher()
        var size: UInt64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw fail(Self.failure("cannot read \(path)", code: errno))
            }
            if count == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            size += UInt64(count)
        }
        guard fsync(fd) == 0 else { throw fail(Self.failure("cannot fsync \(path)", code: errno)) }
        return Staged(path: path, hash: hasher.finalize(), size: size)
    }

    /// Throws `OutOfSpace` when less than `StorageSpace.reservedBytes` would be left free;
    /// `what` names what is being stored.
    public func checkRoom(for what: String) throws(OutOfSpace) {
        guard let available = StorageSpace.availableBytes(at: directory.path), available < StorageSpace.reservedBytes else { return }
        throw OutOfSpace("\(what): the piece store is out of space (\(StorageSpace.describe(available)) free, "
                         + "\(StorageSpace.describe(StorageSpace.reservedBytes)) are kept for the database)")
    }

    public func discard(_ staged: Staged) { unlink(staged.path) }

    public func path(of hash: String) -> String {
        objects.appendingPathComponent(String(hash.prefix(2))).appendingPathComponent(hash).path
    }

    public func remove(_ hash: String) {
        unlink(path(of: hash))
    }

    /// Removes every staged file and every object not in `referenced`; returns how many.
    public func sweep(keeping referenced: Set<String>) -> (staged: Int, objects: Int) {
        let manager = FileManager.default
        var staged = 0, orphans = 0
        for name in (try? manager.contentsOfDirectory(atPath: temporary.path)) ?? [] {
            if unlink(temporary.appendingPathComponent(name).path) == 0 { staged += 1 }
        }
        for shard in (try? manager.contentsOfDirectory(atPath: objects.path)) ?? [] {
            let shardPath = objects.appendingPathComponent(shard).path
            for name in (try? manager.contentsOfDirectory(atPath: shardPath)) ?? [] where !referenced.contains(name) {
                if unlink(shardPath + "/" + name) == 0 { orphans += 1 }
            }
        }
        return (staged, orphans)
    }

    /// Every object's hash, as found on disk.
    public func allObjects() -> Set<String> {
        let manager = FileManager.default
        var hashes: Set<String> = []
        for shard in (try? manager.contentsOfDirectory(atPath: objects.path)) ?? [] {
            for name in (try? manager.contentsOfDirectory(atPath: objects.appendingPathComponent(shard).path)) ?? [] {
                hashes.insert(name)
            }
        }
        return hashes
    }

    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
