import ContractCore
import Foundation
import PieceStore

extension SharedPieceCatalogue {
    public struct MigrationReport: Sendable {
        public var copied = 0
        public var present = 0
        /// Pieces that could not be copied, each with why (a damaged or missing object):
        /// nothing of them is in the catalogue, and a later run tries them again.
        public var failed: [(id: String, reason: String)] = []
    }

    /// Copies every piece of the private store `source` that the catalogue lacks, oldest
    /// first (a piece comes after those it is based on), each piece with its objects in one
    /// transaction, every object's bytes hashed as they are read and compared with its
    /// name. Authors become `user@host` with this host's name. Pieces already here (by id)
    /// are left alone, so a second run copies nothing and an interrupted one goes on where
    /// it stopped. Each piece copied or found is recorded in the private store's directory
    /// (`PrivateStoreCopies`), which a shared host starting on that directory reads.
    /// The private store itself is only read.
    public func migrate(from source: PieceStore, progress: (Int, Int) -> Void) async throws -> MigrationReport {
        let identity = try await prepare()
        let record = PrivateStoreCopies(storeDirectory: source.objects.directory)
        let ids = try source.idsOldestFirst()
        var report = MigrationReport()
        for (index, id) in ids.enumerated() {
            defer { progress(index + 1, ids.count) }
            guard try await missing([id]) == [id] else {
                report.present += 1
                try record.record([id], to: identity)
                continue
            }
            guard let piece = try source.piece(id) else { continue }
            let author = piece.author.contains("@") ? piece.author : author(of: piece.author)
            let copy = StoredPiece(id: piece.id, draft: piece.draft, createdAt: piece.createdAt, author: author,
                                   authorUID: piece.authorUID, facts: piece.facts, assets: piece.assets)
            let objects = piece.assets.map {
                ObjectStore.Staged(path: source.objects.path(of: $0.hash), hash: $0.hash, size: $0.size)
            }
            do {
                // A parent deleted from the private store stays named, as it did there.
                try await store(copy, objects: objects, checkingParents: false, verifying: true)
            } catch let error as StorageUnavailable {
                throw error
            } catch let error as DamagedObject {
                report.failed.append((id, error.description))
                continue
            } catch let error as StoreFailure {
                report.failed.append((id, error.description))
                continue
            }
            try record.record([id], to: identity)
            report.copied += 1
        }
        return report
    }
}

/// An object's bytes do not match its name: not copied, not delivered.
public struct DamagedObject: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let hash: String
    public let size: UInt64
    public let found: (hash: String, size: UInt64)

    public var description: String {
        "\(EarshotErrorName.damagedObject.shortName): \(path) should hold \(size) bytes hashing to \(hash), but its \(found.size) bytes hash to \(found.hash)"
    }
}
