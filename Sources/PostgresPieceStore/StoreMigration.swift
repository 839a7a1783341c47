import Foundation
import PieceStore

extension SharedPieceCatalogue {
    public struct MigrationReport: Sendable {
        public var copied = 0
        public var present = 0
    }

    /// Copies every piece of the private store `source` that the catalogue lacks, oldest
    /// first (a piece comes after those it is based on), each piece with its objects in one
    /// transaction. Authors become `user@host` with this host's name; pieces already here
    /// (by id) are left alone, so a second run copies nothing.
    public func migrate(from source: PieceStore, progress: (Int, Int) -> Void) async throws -> MigrationReport {
        let ids = try source.idsOldestFirst()
        var report = MigrationReport()
        for (index, id) in ids.enumerated() {
            defer { progress(index + 1, ids.count) }
            guard try await missing([id]) == [id] else {
                report.present += 1
                continue
            }
            guard let piece = try source.piece(id) else { continue }
            let author = piece.author.contains("@") ? piece.author : author(of: piece.author)
            let copy = StoredPiece(id: piece.id, draft: piece.draft, createdAt: piece.createdAt, author: author,
                                   authorUID: piece.authorUID, facts: piece.facts, assets: piece.assets)
            let objects = piece.assets.map {
                ObjectStore.Staged(path: source.objects.path(of: $0.hash), hash: $0.hash, size: $0.size)
            }
            // A parent deleted from the private store stays named, as it did there.
            try await store(copy, objects: objects, checkingParents: false)
            report.copied += 1
        }
        return report
    }
}
