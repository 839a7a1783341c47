import EarshotContract
import EarshotDBus

private typealias PieceKeys = PiecesContract.Manager.PieceKeys

/// A piece for `Drop` (org.earshot.Pieces1), after Allihoopa's model.
public struct PieceDrop: Sendable {
    public var title: String
    public var description: String?
    public var tempo: Double?
    public var timeSignature: (upper: UInt8, lower: UInt8)?
    public var basedOn: [String] = []
    public var listed = true
    /// The mix stem: a WAV, Ogg Vorbis or FLAC file, read with the caller's permissions.
    public var mixStemPath: String

    public init(title: String, mixStemPath: String) {
        self.title = title
        self.mixStemPath = mixStemPath
    }

    var values: [String: DBusValue] {
        var values: [String: DBusValue] = [
            PieceKeys.title.name: .string(title), PieceKeys.mixStem.path.name: .string(mixStemPath), PieceKeys.listed.name: .boolean(listed),
        ]
        values[PieceKeys.description] = description.map(DBusValue.string)
        values[PieceKeys.tempo] = tempo.map(DBusValue.double)
        if let timeSignature {
            values[PieceKeys.timeSignatureUpper] = .byte(timeSignature.upper)
            values[PieceKeys.timeSignatureLower] = .byte(timeSignature.lower)
        }
        if !basedOn.isEmpty { values[PieceKeys.basedOn] = .strings(basedOn) }
        return values
    }
}

/// A stored piece as `Get` and `List` describe it.
public struct Piece: Sendable, Equatable {
    public let id: String
    public let title: String
    public let author: String
    public let createdAt: String
    public let tempo: Double?
    public let lengthMicroseconds: UInt64
    /// Everything the service reported, by the contract's names.
    public let values: [String: DBusValue]

    init?(_ values: [String: DBusValue]) {
        guard let id = values["Id"]?.stringValue, let title = values["Title"]?.stringValue else { return nil }
        self.id = id
        self.title = title
        author = values["Author"]?.stringValue ?? ""
        createdAt = values["CreatedAt"]?.stringValue ?? ""
        tempo = values["Tempo"]?.doubleValue
        lengthMicroseconds = values["LengthMicroseconds"]?.uint64Value ?? 0
        self.values = values
    }
}

/// `org.earshot.Pieces1`.
public struct PiecesProxy: Sendable {
    typealias Manager = PiecesContract.Manager
    let calls: ServiceCalls
    private let path = ObjectPath(declared: PiecesContract.managerPath)

    public init(connection: DBusConnection) {
        calls = ServiceCalls(connection: connection, busName: PiecesContract.busName)
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

    /// A page of the pieces `query` matches (keys as `List` takes them), and how many match.
    public func list(_ query: [String: DBusValue] = [:]) async throws -> (pieces: [Piece], total: UInt32) {
        try RequestCheck.check(query, against: Manager.queryKeys)
        let reply = try await calls.call(path, Manager.interface, Manager.list, [.vardict(query)])
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
