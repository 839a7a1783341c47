import Foundation
import Glibc
import PieceStore

/// Where a shared catalogue keeps files on this host: `shared-cache/` under the data
/// directory, never the data directory itself, which may hold a private store (its
/// `objects/`, `tmp/` and `pieces.sqlite`) that the shared catalogue must not touch.
///
/// The directory carries a `CACHEDIR.TAG` (the Cache Directory Tagging Specification), so
/// that backup tools skip it and so that the catalogue sweeps only a directory it made.
enum SharedCacheDirectory {
    static let name = "shared-cache"
    static let tagName = "CACHEDIR.TAG"
    static let signature = "Signature: 8a477f597d28d172789f06886806bc55"
    static let tag = """
        \(signature)
        # This file is a cache directory tag created by earshot-pieces.
        # It holds copies of objects of a shared Earshot catalogue, fetched from its database.
        # For information about cache directory tags, see: https://bford.info/cachedir/

        """

    /// The cache directory under `dataDirectory`, made (with its tag, in one rename) when
    /// missing. Throws when the directory exists untagged: something else's, never swept.
    static func prepare(in dataDirectory: URL) throws -> URL {
        let manager = FileManager.default
        let directory = dataDirectory.appendingPathComponent(name)
        if !manager.fileExists(atPath: directory.path) {
            try manager.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
            let fresh = dataDirectory.appendingPathComponent(".\(name).\(UUID().uuidString)")
            try manager.createDirectory(at: fresh, withIntermediateDirectories: false)
            try Data(tag.utf8).write(to: fresh.appendingPathComponent(tagName))
            // Another process may have made it meanwhile: then its directory stands.
            if rename(fresh.path, directory.path) != 0 { try? manager.removeItem(at: fresh) }
        }
        let text = try? String(contentsOfFile: directory.appendingPathComponent(tagName).path, encoding: .utf8)
        guard text?.hasPrefix(signature) == true else {
            throw StoreFailure("\(directory.path) exists but is not a cache earshot-pieces made (it has no \(tagName)); "
                               + "move it away or choose another --data-dir")
        }
        return directory
    }
}
