import EarshotContract
import EarshotDBus

/// An audio format `Open…`/`Export…` deliver a stem in.
public enum PieceAudioFormat: String, Sendable, CaseIterable {
    case wave, oggVorbis, flac, aacM4A
}

/// A piece that was dropped or deleted, as the store announces it.
public enum PieceChange: Sendable, Equatable {
    /// Dropped, on this host or another sharing the catalogue: its id and summary.
    case dropped(id: String, summary: [String: DBusValue])
    case deleted(id: String)
    /// `ChangesMissed`: the host was away from its shared catalogue longer than it keeps its
    /// changes; some drops and deletions were never announced: read what you show again.
    case missed
}

extension PiecesProxy {
    private var managerPath: ObjectPath { ObjectPath(declared: PiecesContract.managerPath) }

    /// Deletes the piece (its author, root or the service's user).
    public func delete(_ id: String) async throws {
        _ = try await calls.call(managerPath, Manager.interface, Manager.delete, [.string(id)])
    }

    /// The pieces `id` is based on and those based on it, transitively, nearest first.
    public func lineage(_ id: String) async throws -> (ancestors: [String], descendants: [String]) {
        let reply = try await calls.call(managerPath, Manager.interface, Manager.lineage, [.string(id)])
        guard reply.count == 2, let ancestors = reply[0].arrayValue?.compactMap(\.stringValue),
              let descendants = reply[1].arrayValue?.compactMap(\.stringValue) else {
            throw EarshotError(name: DBusError.prefix + "Failed", message: "\(Manager.lineage.name) replied \(reply)")
        }
        return (ancestors, descendants)
    }

    /// The mix stem in `format` (transcoded on first request and kept), open for reading.
    public func openMixStem(_ id: String, format: PieceAudioFormat = .wave) async throws -> UnixFD {
        try descriptor(try await calls.call(managerPath, Manager.interface, Manager.openMixStem, [.string(id), .string(format.rawValue)],
                                            timeout: .seconds(300)), of: Manager.openMixStem)
    }

    /// The preview in `format` (the mix stem when none was dropped), open for reading.
    public func openPreview(_ id: String, format: PieceAudioFormat = .wave) async throws -> UnixFD {
        try descriptor(try await calls.call(managerPath, Manager.interface, Manager.openPreview, [.string(id), .string(format.rawValue)],
                                            timeout: .seconds(300)), of: Manager.openPreview)
    }

    /// The cover image as dropped, open for reading.
    public func openCoverImage(_ id: String) async throws -> UnixFD {
        try descriptor(try await calls.call(managerPath, Manager.interface, Manager.openCoverImage, [.string(id)]), of: Manager.openCoverImage)
    }

    /// The attachment as dropped, open for reading, and its MIME type.
    public func openAttachment(_ id: String) async throws -> (fd: UnixFD, mimeType: String) {
        let reply = try await calls.call(managerPath, Manager.interface, Manager.openAttachment, [.string(id)])
        guard reply.count == 2, let mimeType = reply[1].stringValue else {
            throw EarshotError(name: DBusError.prefix + "Failed", message: "\(Manager.openAttachment.name) replied \(reply)")
        }
        return (try descriptor(reply, of: Manager.openAttachment), mimeType)
    }

    /// Writes the mix stem in `format` to `path`, with the caller's permissions (transcoding may take minutes).
    public func exportMixStem(_ id: String, format: PieceAudioFormat = .wave, to path: String) async throws {
        _ = try await calls.call(managerPath, Manager.interface, Manager.exportMixStem,
                                 [.string(id), .string(format.rawValue), .string(path)], timeout: .seconds(300))
    }

    /// Writes the preview in `format` to `path`, with the caller's permissions.
    public func exportPreview(_ id: String, format: PieceAudioFormat = .wave, to path: String) async throws {
        _ = try await calls.call(managerPath, Manager.interface, Manager.exportPreview,
                                 [.string(id), .string(format.rawValue), .string(path)], timeout: .seconds(300))
    }

    /// Writes the cover image to `path`, with the caller's permissions.
    public func exportCoverImage(_ id: String, to path: String) async throws {
        _ = try await calls.call(managerPath, Manager.interface, Manager.exportCoverImage, [.string(id), .string(path)])
    }

    /// Writes the attachment to `path`, with the caller's permissions; returns its MIME type.
    public func exportAttachment(_ id: String, to path: String) async throws -> String {
        let reply = try await calls.call(managerPath, Manager.interface, Manager.exportAttachment, [.string(id), .string(path)])
        guard let mimeType = reply.first?.stringValue else {
            throw EarshotError(name: DBusError.prefix + "Failed", message: "\(Manager.exportAttachment.name) replied \(reply)")
        }
        return mimeType
    }

    /// Pieces dropped and deleted from now on, in the order the store announces them; the
    /// sequence ends when the connection closes. Subscribed before it returns.
    public func changes() async throws -> AsyncStream<PieceChange> {
        // One subscription to the interface keeps drops and deletions in their order.
        ClientReach.note(Manager.interface, Manager.pieceDropped.name, Manager.pieceDeleted.name, Manager.changesMissed.name)
        let signals: SignalSubscription
        do {
            signals = try await calls.connection.subscribe(MatchRule(sender: calls.busName, interface: Manager.interface.name))
        } catch {
            throw EarshotError(error)
        }
        let (changes, continuation) = AsyncStream<PieceChange>.makeStream()
        let forwarding = Task {
            for await signal in signals {
                switch signal.member {
                case Manager.pieceDropped.name:
                    guard signal.body.count == 2, let id = signal.body[0].stringValue, let summary = signal.body[1].stringKeyedValue else { continue }
                    continuation.yield(.dropped(id: id, summary: summary))
                case Manager.pieceDeleted.name:
                    guard let id = signal.body.first?.stringValue else { continue }
                    continuation.yield(.deleted(id: id))
                case Manager.changesMissed.name:
                    continuation.yield(.missed)
                default:
                    continue
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            signals.cancel()
            forwarding.cancel()
        }
        return changes
    }

    private func descriptor(_ reply: [DBusValue], of method: MethodDeclaration) throws -> UnixFD {
        guard let fd = reply.first?.unixFDValue else {
            throw EarshotError(name: DBusError.prefix + "Failed", message: "\(method.name) replied \(reply)")
        }
        return fd
    }
}
