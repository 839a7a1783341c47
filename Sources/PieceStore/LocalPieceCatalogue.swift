import EarshotSync
import GRDB
import Foundation
import Glibc
import PiecesCore

/// The private catalogue: a `PieceStore` (SQLite and content-addressed files under one
/// directory) on this host, its blocking work on a queue of its own.
public final class LocalPieceCatalogue: PieceCatalogue {
    public let store: PieceStore
    let queue = BlockingQueue(label: "earshot-pieces.local-store", concurrent: true)
    public let events = AsyncStream<CatalogueEvent> { _ in }

    public init(directory: URL) throws {
        store = try PieceStore(directory: directory)
    }

    public var files: ObjectStore { store.objects }
    public var location: String { store.objects.directory.path }

    public func open() async throws -> (staged: Int, objects: Int) {
        try await queue.run { try self.store.sweep() }
    }

    public func close() async {}

    /// Closes the spare reading connections and empties the writing one's caches (SQLite's
    /// page cache, prepared statements), each once its current work is done.
    public func releaseMemory() async {
        store.pool.releaseMemoryEventually()
    }

    public func author(of userName: String) -> String { userName }

    public func mayDelete(_ piece: StoredPiece, by viewer: Viewer) -> Bool {
        DeletePermission.allowed(callerUID: viewer.uid, authorUID: piece.authorUID, serviceUID: getuid())
    }

    public func mayView(_ piece: StoredPiece, by viewer: Viewer) -> Bool {
        piece.draft.listed || piece.authorUID == viewer.uid || viewer.uid == 0 || viewer.uid == getuid()
    }

    public func count() async throws -> Int {
        try await queue.run { try self.store.count() }
    }

    public func missing(_ ids: [String]) async throws -> [String] {
        try await queue.run { try self.store.missing(ids) }
    }

    public func insert(_ piece: StoredPiece, objects staged: [ObjectStore.Staged]) async throws {
        try await queue.run {
            let objects = self.store.objects
            var committed: [String] = []
            do {
                for file in staged {
                    do {
                        try objects.commit(file)
                    } catch let error as ObjectStore.IngestError {
                        throw Self.storing("an asset", error)
                    }
                    committed.append(file.hash)
                }
                try self.store.insert(piece)
            } catch {
                staged.forEach(objects.discard)
                for hash in committed where (try? self.store.isReferenced(hash)) == false { objects.remove(hash) }
                throw error
            }
        }
    }

    public func addTranscode(_ asset: StoredAsset, object staged: ObjectStore.Staged, of id: String) async throws -> Bool {
        try await queue.run {
            let objects = self.store.objects
            let what = "the \(asset.format) transcode of \(asset.kind.key)"
            do {
                try objects.checkRoom(for: what)
                try objects.commit(staged)
            } catch let error as ObjectStore.IngestError {
                objects.discard(staged)
                throw Self.storing(what, error)
            } catch {
                objects.discard(staged)
                throw error
            }
            let recorded: Bool
            do {
                recorded = try self.store.addTranscode(asset, of: id)
            } catch {
                // Not recorded: the object stays only if something else names it.
                if (try? self.store.isReferenced(asset.hash)) == false { objects.remove(asset.hash) }
                throw error
            }
            if !recorded, try !self.store.isReferenced(asset.hash) { objects.remove(asset.hash) }
            return recorded
        }
    }

    public func delete(_ id: String) async throws -> StoredPiece? {
        try await queue.run { try self.store.delete(id) }
    }

    public func piece(_ id: String) async throws -> StoredPiece? {
        try await queue.run { try self.store.piece(id) }
    }

    public func list(_ query: PieceQuery, viewer: Viewer) async throws -> (pieces: [StoredPiece], total: Int) {
        try await queue.run { try self.store.list(query, viewerUID: viewer.uid) }
    }

    public func lineage(_ id: String) async throws -> (ancestors: [String], descendants: [String])? {
        try await queue.run { try self.store.lineage(id) }
    }

    public func localPath(of asset: StoredAsset) async throws -> String {
        store.objects.path(of: asset.hash)
    }

    /// An object store failure while storing `what`, as the error the service reports.
    static func storing(_ what: String, _ error: ObjectStore.IngestError) -> any Error {
        switch error {
        case .noSpace(let message): OutOfSpace("cannot store \(what): the piece store is out of space (\(message))")
        case .io(let message): StoreFailure("cannot store \(what): \(message)")
        case .tooLarge(let limit): StoreFailure("cannot store \(what): larger than \(limit) bytes")
        }
    }
}

/// The store could not do what was asked, for a reason the message gives (an I/O error).
public struct StoreFailure: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
