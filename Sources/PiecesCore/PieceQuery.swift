import ContractCore

/// A `List` request, checked.
public struct PieceQuery: Sendable, Equatable {
    public enum SortKey: String, Sendable, CaseIterable {
        case created, title, tempo, length
    }

    public static let defaultLimit: UInt32 = 50
    public static let maxLimit: UInt32 = 500

    public var titleContains: String?
    public var tempoMin: Double?
    public var tempoMax: Double?
    public var timeSignatureUpper: UInt8?
    public var timeSignatureLower: UInt8?
    public var tonality: String?
    public var root: UInt8?
    public var basedOn: String?
    public var author: String?
    /// RFC 3339 UTC bounds, as stored (exclusive).
    public var createdAfter: String?
    public var createdBefore: String?
    public var sortBy: SortKey = .created
    public var descending = false
    public var offset: UInt32 = 0
    public var limit: UInt32 = defaultLimit

    public init() {}

    public func validate() throws(RuleViolation) {
        if let tempoMin, let tempoMax, tempoMin > tempoMax {
            throw .invalidData(.tempoMin, "\(tempoMin) is above \(EarshotField.tempoMax.name) \(tempoMax)")
        }
        if let tonality, !Tonality.names.contains(tonality) {
            throw .invalidData(.tonality, "'\(tonality)' is not one of unknown, atonal, tonal")
        }
        if let root, root > 11 { throw .invalidData(.root, "\(root) is outside 0..11") }
        if !(1...Self.maxLimit).contains(limit) { throw .invalidData(.limit, "\(limit) is outside 1..500") }
    }
}
