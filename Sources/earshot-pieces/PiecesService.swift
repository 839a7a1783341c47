import CSndFileLoader
import ContractCore
import EarshotContract
import EarshotDBus
import EarshotMedia
import EarshotService
import EarshotSync
import Foundation
import Glibc
import Logging
import PieceStore
import PiecesCore

/// The piece store on the bus. Every disk, decoding and database step runs on the
/// blocking queue; handlers only read requests and shape replies.
final class PiecesService: Sendable {
    typealias Manager = PiecesContract.Manager

    let connection: DBusConnection
    let logger: Logger
    let store: any PieceCatalogue
    let disk = BlockingQueue(label: "earshot-pieces.disk", concurrent: true)
    let manager = Locked<ExportedObject?>(nil)
    /// The `Count` refreshes started and the latest one that set it.
    private let countRefreshes = Locked((started: 0, set: 0))
    /// Transcodes under way, by piece, asset kind and format, so that concurrent requests
    /// for the same one share it.
    let transcodes = Locked<[String: Task<StoredAsset, any Error>]>([:])
    /// Calls that write (drops, transcodes, exports, deletions), let finish on shutdown.
    /// Following other hosts' changes.
    let background = BackgroundTasks()

    init(connection: DBusConnection, store: any PieceCatalogue, logger: Logger) {
        self.connection = connection
        self.store = store
        self.logger = logger
    }

    /// Opens the catalogue and exports the manager; on failure the catalogue is closed
    /// again (its connections included) before the error goes on.
    func start() async throws {
        do {
            try await openAndExport()
        } catch {
            await store.close()
            throw error
        }
        background.run { await self.follow(self.store.events) }
        MemoryReturn.whenIdle { await self.releaseMemory() }
    }

    private func openAndExport() async throws {
        let swept = try await store.open()
        if swept.staged + swept.objects > 0 {
            logger.info("removed what an interrupted run left: \(swept.staged) staged file(s), \(swept.objects) unreferenced object(s)")
        }
        let count = try await store.count()
        let object = try connection.export(PiecesInterfaces.managerPath, interfaces: [PiecesInterfaces.managerInterface(self)],
                                           values: [(Manager.count, .uint32(UInt32(clamping: count)))])
        manager.withLock { $0 = object }
        logger.info("\(count) piece(s) in \(store.location)")
    }

    /// Once the service has gone quiet: the catalogue's caches go.
    func releaseMemory() async {
        await store.releaseMemory()
        // libsndfile and its codec libraries, opened by the last drop or export, unless a
        // file is still open.
        let closed = earshot_sndfile_release() == 1
        logger.debug("quiet: released the catalogue's caches\(closed ? " and closed libsndfile" : "")")
    }

    /// Other hosts' drops and deletions, announced here as if made here.
    private func follow(_ events: AsyncStream<CatalogueEvent>) async {
        for await event in events {
            switch event {
            case .dropped(let piece):
                logger.info("piece \(piece.id) '\(piece.draft.title)' dropped by \(piece.author) on another host")
                emit(Manager.pieceDropped, [.string(piece.id), PieceValues.summary(piece)])
            case .deleted(let id):
                logger.info("piece \(id) deleted on another host")
                emit(Manager.pieceDeleted, [.string(id)])
            case .reconnected:
                break
            case .changesMissed:
                logger.warning("this host was away longer than the shared catalogue keeps its changes: clients are told to read it again")
                emit(Manager.changesMissed, [])
            }
            await updateCount()
        }
    }

    /// Runs blocking work (staging, decoding, transcoding) on the blocking queue, its
    /// errors as the bus shows them (`inStore`).
    func onDisk<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await inStore { try await self.disk.run(body) }
    }

    /// Runs catalogue work: rule violations become their named errors, a full store
    /// `NoSpace`, an unreachable catalogue `StorageUnavailable`, anything else `Failed`.
    func inStore<Result: Sendable>(_ body: @Sendable () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let violation as RuleViolation {
            throw DBusError(violation)
        } catch let error as DBusError {
            if error.name == Self.noSpaceError { logger.warning("\(error.message)") }
            throw error
        } catch let error as OutOfSpace {
            logger.warning("\(error.description)")
            throw Self.noSpace(error.description)
        } catch let error as StorageUnavailable {
            logger.warning("\(error.description)")
            throw DBusError.earshot(.storageUnavailable, error.description)
        } catch let error as NotPermitted {
            logger.notice("\(error.description)")
            throw DBusError.earshot(.disallowed, error.description)
        } catch let error as DamagedAsset {
            logger.error("\(error.description)")
            throw DBusError.earshot(.damagedObject, error.description)
        } catch let error as StoreFailure {
            logger.error("store failure: \(error.description)")
            throw DBusError.failed(error.description)
        } catch {
            logger.error("store failure: \(error)")
            throw DBusError.failed("the piece store failed: \(error)")
        }
    }

    static let noSpaceError = EarshotErrorName.noSpace.name

    /// `org.earshot.Error.NoSpace`: the store has no room for what was asked.
    static func noSpace(_ message: String) -> DBusError { DBusError(name: noSpaceError, message: message) }

    /// The error for an object store failure while staging `what`.
    static func storing(_ what: String, _ error: ObjectStore.IngestError) -> DBusError {
        switch error {
        case .noSpace(let message): noSpace("cannot store \(what): the piece store is out of space (\(message))")
        case .io(let message): .failed("cannot store \(what): \(message)")
        case .tooLarge(let limit): .failed("cannot store \(what): larger than \(limit) bytes")
        }
    }

    /// Runs once the calls under way have finished and answered (or had their few seconds;
    /// a drop cut short is swept at the next start): stops following the catalogue and closes it.
    func shutdown() async {
        background.cancelAll()
        await store.close()
    }

    /// How long a reply waits for `Count` to follow its change: past that (a catalogue slow
    /// to answer) the reply goes and `Count` follows when the catalogue answers.
    static let countPatience: Duration = .seconds(2)

    /// Refreshes `Count`, waiting for it at most `countPatience`.
    func updateCount() async {
        await waitAtMost(Self.countPatience) { await self.refreshCount() }
    }

    /// Counts and sets `Count`, unless a refresh started later has set it already (counts
    /// finishing out of order never go back to an older total).
    private func refreshCount() async {
        let generation = countRefreshes.withLock { $0.started += 1; return $0.started }
        guard let count = try? await store.count() else { return }
        countRefreshes.withLock { refreshes in
            guard generation > refreshes.set else { return }
            refreshes.set = generation
            try? manager.withLock { try $0?.set(Manager.count, .uint32(UInt32(clamping: count))) }
        }
    }

    func emit(_ signal: SignalDeclaration, _ arguments: [DBusValue]) {
        do {
            try manager.withLock { try $0?.emit(signal, arguments) }
        } catch {
            logger.error("cannot emit \(signal.name): \(error)")
        }
    }

    // MARK: Reading

    /// The piece `id` as the caller of `call` may see it: someone else's unlisted piece is
    /// `PieceNotFound`, as one that does not exist.
    func piece(_ id: String, for call: MethodCall) async throws -> StoredPiece {
        let viewer = try await viewer(of: call)
        guard let piece = try await inStore({ try await self.store.piece(id) }), store.mayView(piece, by: viewer) else {
            throw DBusError.earshot(.pieceNotFound, "Id: no piece \(id)")
        }
        return piece
    }

    func get(_ call: MethodCall) async throws -> DBusValue {
        PieceValues.full(try await piece(try call.string(0), for: call))
    }

    func list(_ call: MethodCall) async throws -> [DBusValue] {
        let query = try PieceQueryReader.read(call)
        let viewer = try await viewer(of: call)
        let (pieces, total) = try await inStore { try await self.store.list(query, viewer: viewer) }
        return [.array(.dictionary(key: .string, value: .variant), pieces.map(PieceValues.summary)), .uint32(UInt32(clamping: total))]
    }

    func lineage(_ call: MethodCall) async throws -> [DBusValue] {
        let id = try call.string(0)
        guard let lineage = try await inStore({ try await self.store.lineage(id) }) else {
            throw DBusError.earshot(.pieceNotFound, "Id: no piece \(id)")
        }
        return [.strings(lineage.ancestors), .strings(lineage.descendants)]
    }

    func viewer(of call: MethodCall) async throws -> Viewer {
        let caller = try await call.caller()
        return Viewer(uid: caller.uid, userName: caller.userName)
    }

    // MARK: Deleting

    func delete(_ call: MethodCall) async throws {
        let id = try call.string(0)
        let caller = try await call.caller()
        let existing = try await piece(id, for: call)
        guard store.mayDelete(existing, by: Viewer(uid: caller.uid, userName: caller.userName)) else {
            throw DBusError.earshot(.disallowed, "Delete: \(caller.userName) may not delete \(id): only its author \(existing.author), root or the service's user (of the host it was dropped on) may")
        }
        guard try await inStore({ try await self.store.delete(id) }) != nil else {
            throw DBusError.earshot(.pieceNotFound, "Id: no piece \(id)")
        }
        logger.info("piece \(id) deleted by \(caller.userName) (\(call.sender))", metadata: ["piece": "\(id)"])
        emit(Manager.pieceDeleted, [.string(id)])
        await updateCount()
    }
}
