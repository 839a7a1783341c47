import Foundation
import Glibc
import PieceStore

/// Which pieces of a private store were copied into which shared catalogue: a file in the
/// private store's directory, one line per piece (`<catalogue id> <piece id>`), appended
/// by `migrate` as it copies. A piece copied and later deleted from the catalogue is not
/// missing from it, and the record says so.
public struct PrivateStoreCopies: Sendable {
    static let fileName = "shared-catalogue-copies"
    public let path: String

    public init(storeDirectory: URL) {
        path = storeDirectory.appendingPathComponent(Self.fileName).path
    }

    /// The ids recorded as copied into the catalogue `catalogue` (its identity).
    public func copied(to catalogue: String) -> Set<String> {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        var ids: Set<String> = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, fields[0] == catalogue { ids.insert(String(fields[1])) }
        }
        return ids
    }

    /// Appends `ids` as copied into `catalogue`, durably.
    public func record(_ ids: [String], to catalogue: String) throws {
        guard !ids.isEmpty else { return }
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StoreFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let text = ids.map { "\(catalogue) \($0)\n" }.joined()
        try text.utf8CString.withUnsafeBytes { bytes in
            try SharedPieceCatalogue.writeAll(fd, UnsafeRawBufferPointer(rebasing: bytes.dropLast()), path: path)
        }
        guard fsync(fd) == 0 else { throw StoreFailure("cannot sync \(path): \(String(cString: strerror(errno)))") }
    }
}

/// A shared host's data directory holds a private store with pieces the catalogue does not
/// have: serving would hide them from every caller, so the host does not start. Nothing
/// was changed; `migrate` copies them.
public struct PrivateStoreNotCopied: Error, Sendable, CustomStringConvertible {
    public let directory: String
    public let missing: Int
    public let location: String

    public var description: String {
        "PrivateStoreNotCopied: \(directory) holds a private store with \(missing) piece(s) that the shared catalogue at "
            + "\(location) does not have; nothing was changed. Copy them first with "
            + "'earshot-pieces migrate --from-data-dir \(directory) --database \(location)' "
            + "(with this host's --database and password options: its role is its name), then start again."
    }
}
