import FoundationEssentials
import Glibc
import SessionCore

/// The desired state, `KeepEnforced` and `DuckLevel` on disk, as JSON, replaced
/// atomically.
struct StateFile: Sendable {
    struct Contents: Codable, Equatable, Sendable {
        var desired: DesiredState
        var keepEnforced: Bool
        /// Absent in files written before the system mixer was followed.
        var duckLevel: Double?
    }

    let path: String

    /// The default: `$XDG_STATE_HOME/earshot/session.json` (`~/.local/state/…`).
    static func defaultPath(environment: [String: String]) -> String {
        let stateHome = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? FileManager.default.temporaryDirectory.path) + "/.local/state"
        return stateHome + "/earshot/session.json"
    }

    /// The stored contents; nil when there is no file. A file that does not parse throws.
    func load() throws -> Contents? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try JSONDecoder().decode(Contents.self, from: data)
    }

    func save(_ contents: Contents) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try AtomicFile.write(try encoder.encode(contents), to: path)
    }
}

/// A file replaced atomically: written to a temporary file, fsynced, renamed, directory
/// fsynced, so a crash leaves the old file or the new one.
enum AtomicFile {
    static func write(_ data: Data, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == data.count, synced == 0 else {
            unlink(temporary.path)
            throw POSIXError(.EIO)
        }
        guard rename(temporary.path, path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        let directoryFD = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }
}
