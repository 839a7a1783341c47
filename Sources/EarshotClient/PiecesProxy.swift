import EarshotContract
import EarshotDBus

private typealias PieceKeys = PiecesContract.Manager.PieceKeys

/// A piece's metadata, after Allihoopa's model: what `Drop` takes besides its title,
/// length and assets (and what `RecordPiece` passes on to it). Absent values take the
/// contract's defaults; the rules are the store's (`Drop`'s errors).
public struct PieceMetadata: Sendable, Equatable {
    public var description: String?
    public var tempo: Double?
    public var loopStartMicroseconds: UInt64?
    public var loopEndMicroseconds: UInt64?
    public var timeSignatureUpper: UInt8?
    public var timeSignatureLower: UInt8?
    public var basedOn: [String] = []
    public var tonality: PieceTonality?
    /// For a tonal piece: 12 values, C to B.
    public var scale: [Bool]?
    /// For a tonal piece: 0 (C) to 11 (B).
    public var root: UInt8?
    public var listed: Bool?

    public init() {}

    /// Both halves of the time signature, when both are set.
    public var timeSignature: (upper: UInt8, lower: UInt8)? {
        get { timeSignatureUpper.flatMap { upper in timeSignatureLower.map { (upper, $0) } } }
        set {
            timeSignatureUpper = newValue?.upper
            timeSignatureLower = newValue?.lower
        }
    }

    func add(to values: inout [String: DBusValue]) {
        values[PieceKeys.description] = description.map(DBusValue.string)
        values[PieceKeys.tempo] = tempo.map(DBusValue.double)
        values[PieceKeys.loopStartMicroseconds] = loopStartMicroseconds.map(DBusValue.uint64)
        values[PieceKeys.loopEndMicroseconds] = loopEndMicroseconds.map(DBusValue.uint64)
        values[PieceKeys.timeSignatureUpper] = timeSignatureUpper.map(DBusValue.byte)
        values[PieceKeys.timeSignatureLower] = timeSignatureLower.map(DBusValue.byte)
        if !basedOn.isEmpty { values[PieceKeys.basedOn] = .strings(basedOn) }
        values[PieceKeys.tonality] = tonality.map { .string($0.rawValue) }
        values[PieceKeys.scale] = scale.map { .array(.boolean, $0.map(DBusValue.boolean)) }
        values[PieceKeys.root] = root.map(DBusValue.byte)
        values[PieceKeys.listed] = listed.map(DBusValue.boolean)
    }

    /// The metadata a stored piece reports (`Get`; `List` gives the summary's keys only).
    init(reported values: [String: DBusValue]) {
        func byte(_ key: OptionKey) -> UInt8? { if case .byte(let value)? = values[key] { value } else { nil } }
        description = values[PieceKeys.description]?.stringValue
        tempo = values[PieceKeys.tempo]?.doubleValue
        loopStartMicroseconds = values[PieceKeys.loopStartMicroseconds]?.uint64Value
        loopEndMicroseconds = values[PieceKeys.loopEndMicroseconds]?.uint64Value
        timeSignatureUpper = byte(PieceKeys.timeSignatureUpper)
        timeSignatureLower = byte(PieceKeys.timeSignatureLower)
        basedOn = values[PieceKeys.basedOn]?.stringArrayValue ?? []
        tonality = values[PieceKeys.tonality]?.stringValue.flatMap(PieceTonality.init(rawValue:))
        scale = values[PieceKeys.scale]?.arrayValue?.compactMap(\.boolValue)
        root = byte(PieceKeys.root)
        listed = values[PieceKeys.listed]?.boolValue
    }
}

/// A piece for `Drop` (org.earshot.Pieces1), after Allihoopa's model.
@dynamicMemberLookup
public struct PieceDrop: Sendable {
    public var title: String
    public var metadata = PieceMetadata()
    /// The mix stem: a WAV, Ogg Vorbis or FLAC file.
    public var mixStem: Asset
    public var preview: Asset?
    /// A 640×640 PNG or JPEG.
    public var coverImage: Asset?
    /// Any file of at most 30 MiB, with its MIME type.
    public var attachment: (asset: Asset, mimeType: String)?
    /// Whose piece it is, for a service dropping on a user's behalf (uid 0 or the store's
    /// own user only; others are refused).
    public var authorUid: UInt32?
    /// Its length; measured from the mix stem when nil, and refused when it is more than 1%
    /// away from it.
    public var lengthMicroseconds: UInt64?

    /// A file handed over: by descriptor (the service needs no access to its path), or by
    /// path (read with the caller's permissions).
    public enum Asset: Sendable {
        case descriptor(UnixFD)
        case path(String)

        func add(to values: inout [String: DBusValue], as keys: PiecesContract.Manager.AssetKeys) {
            switch self {
            case .descriptor(let fd): values[keys.fd] = .unixFD(fd)
            case .path(let path): values[keys.path] = .string(path)
            }
        }
    }

    public init(title: String, mixStem: Asset, metadata: PieceMetadata = PieceMetadata()) {
        self.title = title
        self.mixStem = mixStem
        self.metadata = metadata
    }

    public init(title: String, mixStemPath: String) {
        self.init(title: title, mixStem: .path(mixStemPath))
    }

    /// The metadata's fields, as `piece.tempo = 120`.
    public subscript<Value>(dynamicMember field: WritableKeyPath<PieceMetadata, Value>) -> Value {
        get { metadata[keyPath: field] }
        set { metadata[keyPath: field] = newValue }
    }

    var values: [String: DBusValue] {
        var values: [String: DBusValue] = [PieceKeys.title.name: .string(title)]
        metadata.add(to: &values)
        mixStem.add(to: &values, as: PieceKeys.mixStem)
        preview?.add(to: &values, as: PieceKeys.preview)
        coverImage?.add(to: &values, as: PieceKeys.coverImage)
        if let attachment {
            attachment.asset.add(to: &values, as: PieceKeys.attachment)
            values[PieceKeys.attachmentMimeType] = .string(attachment.mimeType)
        }
        values[PieceKeys.authorUid] = authorUid.map(DBusValue.uint32)
        values[PieceKeys.lengthMicroseconds] = lengthMicroseconds.map(DBusValue.uint64)
        return values
    }
}

/// A stored piece as `Get` and `List` describe it.
@dynamicMemberLookup
public struct Piece: Sendable, Equatable {
    public let id: String
    public let title: String
    public let author: String
    public let createdAt: String
    public let lengthMicroseconds: UInt64
    /// What it was dropped with besides its title, length and assets, its fields also read
    /// as the piece's (`piece.root`); `List` reports the summary's keys only.
    public let metadata: PieceMetadata
    /// The mix stem as the store measured it: its rate in Hz, channels, EBU R128 integrated
    /// loudness and true peak in dBTP (`Get` only; nil in `List`'s pieces).
    public let sampleRate: UInt32?
    public let channels: UInt32?
    public let loudnessLufs: Double?
    public let truePeakDbtp: Double?
    /// Everything the service reported, by the contract's names.
    public let values: [String: DBusValue]

    init?(_ values: [String: DBusValue]) {
        typealias Stored = PiecesContract.Manager.StoredKeys
        typealias Keys = PiecesContract.Manager.PieceKeys
        guard let id = values[Stored.id.name]?.stringValue, let title = values[Keys.title.name]?.stringValue else { return nil }
        self.id = id
        self.title = title
        author = values[Stored.author.name]?.stringValue ?? ""
        createdAt = values[Stored.createdAt.name]?.stringValue ?? ""
        lengthMicroseconds = values[Keys.lengthMicroseconds.name]?.uint64Value ?? 0
        metadata = PieceMetadata(reported: values)
        sampleRate = values[Stored.sampleRate]?.uint32Value
        channels = values[Stored.channels]?.uint32Value
        loudnessLufs = values[Stored.loudnessLufs]?.doubleValue
        truePeakDbtp = values[Stored.truePeakDbtp]?.doubleValue
        self.values = values
    }

    /// The metadata's fields, as `piece.root`.
    public subscript<Value>(dynamicMember field: KeyPath<PieceMetadata, Value>) -> Value { metadata[keyPath: field] }
}

/// `org.earshot.Pieces1`.
public struct PiecesProxy: Sendable {
    typealias Manager = PiecesContract.Manager
    private(set) var calls: ServiceCalls
    let path = ObjectPath(declared: PiecesContract.managerPath)

    /// Calls give up after `timeout` (no reply: `org.freedesktop.DBus.Error.NoReply`).
    ///
    /// Calls that do long work keep their own, longer limits: `Drop` 120 s; opening,
    /// exporting and transcoding assets 300 s.
    public init(connection: DBusConnection, timeout: Duration = DBusConnection.defaultTimeout) {
        calls = ServiceCalls(connection: connection, busName: PiecesContract.busName, timeout: timeout)
    }

    /// The same proxy with calls that give up after `timeout`.
    public func timing(out timeout: Duration) -> PiecesProxy {
        var proxy = self
        proxy.calls.timeout = timeout
        return proxy
    }

    /// Stores `piece`; returns its id.
    public func drop(_ piece: PieceDrop) async throws -> String {
        let values = piece.values
        try RequestCheck.check(values, against: Manager.pieceKeys)
        let reply = try await calls.call(path, Manager.interface, Manager.drop, [.vardict(values)], timeout: .seconds(120))
        guard let id = reply.first?.stringValue else { throw EarshotError(name: DBusError.prefix + "Failed", message: "Drop replied \(reply)") }
        return id
    }

    /// The piece with `id`.
    public func get(_ id: String) async throws -> Piece {
        let reply = try await calls.call(path, Manager.interface, Manager.get, [.string(id)])
        guard let piece = reply.first?.stringKeyedValue.flatMap(Piece.init) else {
            throw EarshotError(name: DBusError.prefix + "Failed", message: "Get replied \(reply)")
        }
        return piece
    }

    /// A page of the pieces `query` matches, and how many match in all.
    public func list(_ query: PieceQuery = PieceQuery()) async throws -> (pieces: [Piece], total: UInt32) {
        let values = query.values
        try RequestCheck.check(values, against: Manager.queryKeys)
        let reply = try await calls.call(path, Manager.interface, Manager.list, [.vardict(values)])
        guard reply.count == 2, let entries = reply[0].arrayValue, let total = reply[1].uint32Value else {
            throw EarshotError(name: DBusError.prefix + "Failed", message: "List replied \(reply)")
        }
        return (entries.compactMap { $0.stringKeyedValue.flatMap(Piece.init) }, total)
    }

    /// How many pieces the store holds.
    public func count() async throws -> UInt32 {
        guard let count = try await calls.property(path, Manager.interface, Manager.count).uint32Value else {
            throw EarshotError(name: DBusError.prefix + "Failed", message: "Count is not a u")
        }
        return count
    }
}
