import ContractCore
import EarshotContract
import EarshotDBus
import EarshotMedia
import Foundation
import Glibc
import PieceStore
import PiecesCore

/// `Drop`: stream every asset into staging while hashing it, check the audio by decoding
/// it, the cover image by its header, then commit the objects and, in one transaction,
/// the piece. Anything that fails leaves no trace.
extension PiecesService {
    func drop(_ call: MethodCall) async throws -> String {
        let request = try DropRequest.read(call)
        let caller = try await Self.author(of: request, call: call)
        let missing = try await inStore { try await self.store.missing(request.draft.basedOn) }
        if let first = missing.first {
            throw DBusError.earshot(.basedOnNotFound, "\(PiecesContract.Manager.PieceKeys.basedOn.name): no piece \(first)")
        }
        let started = ContinuousClock.now
        let (piece, staged) = try await onDisk { try self.assemble(request, caller: caller) }
        try await inStore { try await self.store.insert(piece, objects: staged) }
        let sizes = piece.assets.map { "\($0.kind.rawValue) \($0.size) B" }.joined(separator: ", ")
        logger.info("piece \(piece.id) '\(piece.draft.title)' dropped by \(caller.userName) in \(started.duration(to: .now)): \(sizes)",
                    metadata: ["piece": "\(piece.id)", "author": "\(piece.author)"])
        emit(Manager.pieceDropped, [.string(piece.id), PieceValues.summary(piece)])
        await updateCount()
        return piece.id
    }

    /// Who the piece is dropped by: the caller, or with `AuthorUid` the user it names,
    /// which only root and the service's own user may do.
    static func author(of request: DropRequest, call: MethodCall) async throws -> CallerIdentity {
        let caller = try await call.caller()
        guard let uid = request.authorUID, uid != caller.uid else { return caller }
        guard caller.uid == 0 || caller.uid == getuid() else {
            throw DBusError.earshot(.disallowed, "\(PiecesContract.Manager.PieceKeys.authorUid.name): \(caller.userName) may not drop on behalf of uid \(uid)")
        }
        return CallerIdentity(uniqueName: caller.uniqueName, uid: uid, userName: DBusConnection.userName(for: uid))
    }

    /// The blocking part of `Drop`, run on the disk queue: the piece and its staged files,
    /// ready for the catalogue.
    func assemble(_ request: DropRequest, caller: CallerIdentity) throws -> (StoredPiece, [ObjectStore.Staged]) {
        var staged: [AssetKind: ObjectStore.Staged] = [:]
        var handedOver = false
        defer { if !handedOver { staged.values.forEach(store.files.discard) } }
        for kind in AssetKind.allCases {
            guard let source = request.sources[kind] else { continue }
            staged[kind] = try stage(source, kind: kind, caller: caller)
        }
        guard let mixStem = staged[.mixStem] else { throw DBusError.invalidArgs("\(EarshotField.mixStem.name): a mix stem is required") }
        let analysis = try analyze(mixStem, field: AssetKind.mixStem.key)
        var formats: [AssetKind: String] = [.mixStem: analysis.format.rawValue, .attachment: ""]
        if let preview = staged[.preview] { formats[.preview] = try analyze(preview, field: AssetKind.preview.key).format.rawValue }
        if let cover = staged[.coverImage] {
            let image: (kind: CoverImage.Kind, width: Int, height: Int)
            do {
                image = try CoverImage.inspect(path: cover.path)
            } catch {
                let message = error.message.replacingOccurrences(of: "'\(cover.path)' is ", with: "")
                    .replacingOccurrences(of: cover.path, with: "the file")
                throw DBusError.earshot(.invalidCoverImage, "\(EarshotField.coverImage.name): \(message)")
            }
            guard image.width == CoverImageRule.width, image.height == CoverImageRule.height else {
                throw DBusError.earshot(.invalidCoverImage, "\(EarshotField.coverImage.name): \(image.width)×\(image.height), must be 640×640")
            }
            formats[.coverImage] = image.kind.rawValue
        }
        var draft = request.draft
        draft.lengthMicroseconds = try draft.validate(measuredMicroseconds: analysis.durationMicroseconds)

        // What is staged already takes its room: what is left must not eat into the reserve.
        try store.files.checkRoom(for: PiecesContract.Manager.drop.name)
        let assets = AssetKind.allCases.compactMap { kind in
            staged[kind].map { StoredAsset(kind: kind, format: formats[kind] ?? "", hash: $0.hash, size: $0.size, dropped: true) }
        }
        let piece = StoredPiece(id: UUID().uuidString.lowercased(), draft: draft, createdAt: PieceValues.now(),
                                author: store.author(of: caller.userName), authorUID: caller.uid,
                                facts: MixStemFacts(sampleRate: analysis.sampleRate, channels: analysis.channels,
                                                    loudnessLufs: analysis.loudnessLufs, truePeakDbtp: analysis.truePeakDbtp),
                                assets: assets)
        handedOver = true
        return (piece, Array(staged.values))
    }

    private func stage(_ source: AssetSource, kind: AssetKind, caller: CallerIdentity) throws -> ObjectStore.Staged {
        let fd: Int32
        var opened = false
        switch source {
        case .fd(let unixFD):
            guard let raw = unixFD.rawValue else { throw DBusError.invalidArgs("\(kind.key): the file descriptor is closed") }
            fd = raw
        case .path(let path):
            fd = try FileAccess.openForReading(path, field: kind.key + "Path", caller: caller)
            opened = true
        }
        defer { if opened { close(fd) } }
        do {
            return try store.files.stage(from: fd, limit: kind.maxBytes)
        } catch {
            switch error {
            case .tooLarge(let limit) where kind == .attachment:
                throw DBusError.earshot(.attachmentTooLarge, "Attachment: larger than \(limit / 1024 / 1024) MiB")
            case .tooLarge(let limit):
                throw DBusError.earshot(.invalidData, "\(kind.key): larger than \(limit) bytes")
            case .noSpace(let message):
                throw Self.noSpace("\(kind.key): the piece store is out of space (\(message))")
            case .io(let message):
                throw DBusError.failed("\(kind.key): \(message)")
            }
        }
    }

    private func analyze(_ staged: ObjectStore.Staged, field: String) throws -> AudioAnalysis {
        do {
            return try AudioAnalyzer.analyze(path: staged.path)
        } catch {
            // The staged file's name means nothing to the client.
            let message = error.message.replacingOccurrences(of: "'\(staged.path)' is ", with: "")
                .replacingOccurrences(of: staged.path, with: field)
            throw DBusError.earshot(.invalidAudio, "\(field): \(message)")
        }
    }
}
