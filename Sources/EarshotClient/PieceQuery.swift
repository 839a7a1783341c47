import EarshotContract
import EarshotDBus

private typealias QueryKeys = PiecesContract.Manager.QueryKeys

/// A `List` query: filters, order and page. Every field is optional; the contract's
/// defaults apply (newest first, 50 per page).
public struct PieceQuery: Sendable, Equatable {
    public var titleContains: String?
    public var tempoMin: Double?
    public var tempoMax: Double?
    public var timeSignature: (upper: UInt8, lower: UInt8)? {
        get { timeSignatureUpper.flatMap { upper in timeSignatureLower.map { (upper, $0) } } }
        set {
            timeSignatureUpper = newValue?.upper
            timeSignatureLower = newValue?.lower
        }
    }
    public var timeSignatureUpper: UInt8?
    public var timeSignatureLower: UInt8?
    public var tonality: Tonality?
    /// The root, 0 (C) to 11 (B).
    public var root: UInt8?
    /// Only direct children of this piece.
    public var basedOn: String?
    /// Dropped by this author (user, or user@host on a shared catalogue).
    public var author: String?
    /// RFC 3339 times.
    public var createdAfter: String?
    public var createdBefore: String?
    public var sortBy: Order?
    public var descending = false
    public var offset: UInt32?
    public var limit: UInt32?

    public typealias Tonality = PieceTonality
    public enum Order: String, Sendable, CaseIterable { case created, title, tempo, length }

    public init() {}

    var values: [String: DBusValue] {
        var values: [String: DBusValue] = [:]
        values[QueryKeys.titleContains] = titleContains.map(DBusValue.string)
        values[QueryKeys.tempoMin] = tempoMin.map(DBusValue.double)
        values[QueryKeys.tempoMax] = tempoMax.map(DBusValue.double)
        values[QueryKeys.timeSignatureUpper] = timeSignatureUpper.map(DBusValue.byte)
        values[QueryKeys.timeSignatureLower] = timeSignatureLower.map(DBusValue.byte)
        values[QueryKeys.tonality] = tonality.map { .string($0.rawValue) }
        values[QueryKeys.root] = root.map(DBusValue.byte)
        values[QueryKeys.basedOn] = basedOn.map(DBusValue.string)
        values[QueryKeys.author] = author.map(DBusValue.string)
        values[QueryKeys.createdAfter] = createdAfter.map(DBusValue.string)
        values[QueryKeys.createdBefore] = createdBefore.map(DBusValue.string)
        values[QueryKeys.sortBy] = sortBy.map { .string($0.rawValue) }
        if descending { values[QueryKeys.descending] = .boolean(true) }
        values[QueryKeys.offset] = offset.map(DBusValue.uint32)
        values[QueryKeys.limit] = limit.map(DBusValue.uint32)
        return values
    }

    public static func == (a: PieceQuery, b: PieceQuery) -> Bool { a.values == b.values }
}

/// A piece's tonality.
public enum PieceTonality: String, Sendable, CaseIterable { case unknown, atonal, tonal }
