import PiecesCore

/// Who asks: the caller's uid and user name on this host.
public struct Viewer: Sendable, Equatable {
    public let uid: UInt32
    public let userName: String

    public init(uid: UInt32, userName: String) {
        self.uid = uid
        self.userName = userName
    }
}

/// A change another host made to a shared catalogue.
public enum CatalogueEvent: Sendable {
    case dropped(StoredPiece)
    case deleted(id: String)
    /// The catalogue was unreachable and is back: what is counted may have changed.
    case reconnected
    /// The host was away longer than the catalogue keeps its changes: some drops and
    /// deletions were not announced, and what clients show should be read again.
    case changesMissed
}

/// The catalogue could not be reached or answered as a server that is going away; the
/// message says what failed. Nothing was changed by the call that met it.
public struct StorageUnavailable: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// The catalogue itself refused what was asked (a shared catalogue's database holds each
/// host to its own pieces); nothing was changed.
public struct NotPermitted: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// An asset's stored bytes do not hash to its name (the shared catalogue's copy was
/// damaged in the database); nothing was delivered.
public struct DamagedAsset: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Where pieces are kept: their metadata, lineage and asset bytes. The private store
/// (SQLite and files under one directory) and the shared one (a PostgreSQL server many
/// hosts use) both stand behind this; the service sees no difference.
///
/// Bytes on their way in are staged on this host (`files`), where they are hashed and
/// measured; `insert` and `addTranscode` make them part of the catalogue, all or nothing.
public protocol PieceCatalogue: Sendable {
    /// Staging for incoming bytes and transcodes (and, for a shared catalogue, a cache of
    /// verified objects) on this host.
    var files: ObjectStore { get }
    /// Where the catalogue is, for logs (a directory, or a database without password).
    var location: String { get }

    /// Prepares the catalogue (schema, migrations) and removes what an interrupted run
    /// left on this host; returns what was removed.
    func open() async throws -> (staged: Int, objects: Int)
    func close() async
    /// Lets go of what it keeps between calls only to be faster (caches, spare
    /// connections), for a service that has gone quiet; the next call works as before.
    func releaseMemory() async

    /// The author recorded for a piece `userName` drops on this host.
    func author(of userName: String) -> String
    /// Whether `viewer` may delete `piece`: its author, root or the service's own user.
    func mayDelete(_ piece: StoredPiece, by viewer: Viewer) -> Bool
    /// Whether `viewer` may see `piece` at all: a listed piece, or an unlisted one of
    /// theirs (root and the service's own user see this host's). To anyone else an
    /// unlisted piece is as if it did not exist.
    func mayView(_ piece: StoredPiece, by viewer: Viewer) -> Bool

    func count() async throws -> Int
    /// The ids among `ids` that are not pieces.
    func missing(_ ids: [String]) async throws -> [String]
    /// Adds a complete piece with the staged files holding its assets' bytes. The staged
    /// files are consumed: they become objects or are removed. `BasedOn` ids are checked
    /// again in the same transaction (`BasedOnNotFound`).
    func insert(_ piece: StoredPiece, objects: [ObjectStore.Staged]) async throws
    /// Records a transcode whose bytes are staged (consumed as by `insert`); false when
    /// the piece is gone.
    func addTranscode(_ asset: StoredAsset, object: ObjectStore.Staged, of id: String) async throws -> Bool
    /// Deletes a piece and the objects nobody names any more; returns it (nil when there
    /// was none).
    func delete(_ id: String) async throws -> StoredPiece?
    func piece(_ id: String) async throws -> StoredPiece?
    /// One page of the pieces `query` selects that `viewer` may see, and how many in all.
    func list(_ query: PieceQuery, viewer: Viewer) async throws -> (pieces: [StoredPiece], total: Int)
    /// Ancestors and descendants of `id`, nearest first; nil when there is no such piece.
    func lineage(_ id: String) async throws -> (ancestors: [String], descendants: [String])?
    /// A file on this host holding the asset's bytes, verified against its hash.
    func localPath(of asset: StoredAsset) async throws -> String
    /// What other hosts change (a private catalogue has no other hosts: it never yields).
    var events: AsyncStream<CatalogueEvent> { get }
}
