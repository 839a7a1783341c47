import ContractCore
import EarshotDBus
import EarshotMedia
import Foundation
import Glibc
import PieceStore
import PiecesCore

/// `Open…` and `Export…`: an asset in the format asked for, transcoded on first request
/// (once, however many ask at the same time) and kept like any other asset.
extension PiecesService {
    func open(_ call: MethodCall, kind: AssetKind) async throws -> DBusValue {
        let id = try call.string(0)
        let format = kind.isAudio ? try call.string(1) : nil
        let asset = try await resolve(try await piece(id, for: call), kind: kind, format: format)
        return .unixFD(try await openObject(asset))
    }

    func openAttachment(_ call: MethodCall) async throws -> [DBusValue] {
        let id = try call.string(0)
        let piece = try await piece(id, for: call)
        let asset = try await resolve(piece, kind: .attachment, format: nil)
        return [.unixFD(try await openObject(asset)), .string(piece.draft.attachmentMimeType ?? "application/octet-stream")]
    }

    /// `Export…(id, [format,] path)`: a copy at `path`, made with the caller's rights.
    func export(_ call: MethodCall, kind: AssetKind) async throws -> [DBusValue] {
        let id = try call.string(0)
        let format = kind.isAudio ? try call.string(1) : nil
        let path = try call.string(kind.isAudio ? 2 : 1)
        let caller = try await call.caller()
        let piece = try await piece(id, for: call)
        let asset = try await resolve(piece, kind: kind, format: format)
        let source = try await inStore { try await self.store.localPath(of: asset) }
        try await onDisk {
            let fd = try FileAccess.createForWriting(path, caller: caller)
            defer { close(fd) }
            try FileAccess.copy(from: source, to: fd)
        }
        logger.info("piece \(id): \(kind.rawValue)\(format.map { " (\($0))" } ?? "") exported to \(path) for \(caller.userName)")
        guard kind == .attachment else { return [] }
        return [.string(piece.draft.attachmentMimeType ?? "application/octet-stream")]
    }

    private func openObject(_ asset: StoredAsset) async throws -> UnixFD {
        let path = try await inStore { try await self.store.localPath(of: asset) }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DBusError.failed("cannot open a stored asset: \(String(cString: strerror(errno)))") }
        return UnixFD(taking: fd)
    }

    /// The stored asset to deliver: the dropped one, or its transcode into `format`. A
    /// preview falls back to the mix stem when none was dropped.
    func resolve(_ piece: StoredPiece, kind: AssetKind, format: String?) async throws -> StoredAsset {
        let id = piece.id
        guard kind.isAudio else {
            guard let asset = piece.dropped(kind) else {
                throw DBusError.earshot(.assetNotFound, "\(kind.key): piece \(id) has none")
            }
            return asset
        }
        guard let format, let target = MediaFormat(rawValue: format) else {
            throw DBusError.invalidArgs("format: '\(format ?? "")' is not one of \(MediaFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let source: AssetKind = kind == .preview && piece.dropped(.preview) == nil ? .mixStem : kind
        if let existing = piece.asset(source, format: target.rawValue) { return existing }
        return try await transcode(piece, kind: source, to: target)
    }

    private func transcode(_ piece: StoredPiece, kind: AssetKind, to format: MediaFormat) async throws -> StoredAsset {
        let key = "\(piece.id)/\(kind.rawValue)/\(format.rawValue)"
        let task = transcodes.withLock { running -> Task<StoredAsset, any Error> in
            if let task = running[key] { return task }
            let task = Task { try await self.produce(piece, kind: kind, format: format) }
            running[key] = task
            return task
        }
        defer { _ = transcodes.withLock { $0.removeValue(forKey: key) } }
        return try await task.value
    }

    /// Transcodes on the disk queue and records the result. Like a drop, a transcode keeps
    /// clear of the store's reserved free space; one that cannot be kept leaves nothing.
    private func produce(_ piece: StoredPiece, kind: AssetKind, format: MediaFormat) async throws -> StoredAsset {
        guard let source = piece.dropped(kind) else { throw DBusError.earshot(.assetNotFound, "\(kind.key): piece \(piece.id) has none") }
        let started = ContinuousClock.now
        let input = try await inStore { try await self.store.localPath(of: source) }
        let staged = try await onDisk { try self.transcode(input, of: piece, kind: kind, to: format) }
        let asset = StoredAsset(kind: kind, format: format.rawValue, hash: staged.hash, size: staged.size, dropped: false)
        guard try await inStore({ try await self.store.addTranscode(asset, object: staged, of: piece.id) }) else {
            throw DBusError.earshot(.pieceNotFound, "Id: piece \(piece.id) was deleted")
        }
        logger.info("piece \(piece.id): \(kind.rawValue) transcoded to \(format.rawValue) in \(started.duration(to: .now)) (\(asset.size) B)")
        return asset
    }

    /// The blocking part of a transcode: the file `input` transcoded and staged.
    private func transcode(_ input: String, of piece: StoredPiece, kind: AssetKind, to format: MediaFormat) throws -> ObjectStore.Staged {
        let what = "the \(format.rawValue) transcode of \(kind.key)"
        try store.files.checkRoom(for: what)
        let output = store.files.stagingPath(extension: format.fileExtension)
        do {
            try Transcoder.transcode(from: input, to: output, format: format)
        } catch {
            unlink(output)
            if error.kind == .io, let exhaustion = StorageSpace.exhaustion(quotedIn: error.message) {
                throw Self.noSpace("cannot store \(what) of \(piece.id): the piece store is out of space (\(exhaustion))")
            }
            throw DBusError.failed("cannot transcode \(kind.key) of \(piece.id) to \(format.rawValue): \(error.message)")
        }
        do {
            return try store.files.stage(writtenAt: output)
        } catch {
            throw Self.storing(what, error)
        }
    }
}

extension MediaFormat {
    var fileExtension: String {
        switch self {
        case .wave: "wav"
        case .oggVorbis: "ogg"
        case .flac: "flac"
        case .aacM4A: "m4a"
        }
    }
}
