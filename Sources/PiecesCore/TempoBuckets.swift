/// A tempo range cut into whole 1 BPM buckets (`floor(tempo)`) and the partial buckets at its
/// ends, so that a count kept per bucket answers the middle and only the ends need the pieces
/// themselves. Pieces without a tempo fall in no bucket here: a range with a bound never
/// matches them, and a range without bounds is not cut.
public struct TempoBuckets: Sendable, Equatable {
    /// Whole buckets counted from the tally: `floor(tempo)` in `lower...upper`.
    public let whole: ClosedRange<Int>?
    /// The pieces to count one by one: those of the range with a tempo in one of these
    /// half-open ranges (`nil` is unbounded).
    public let edges: [Edge]

    public struct Edge: Sendable, Equatable {
        public let from: Double?
        public let below: Double?

        public init(from: Double?, below: Double?) {
            self.from = from
            self.below = below
        }
    }

    /// Buckets go no further than this: every valid tempo is below it.
    static let ceiling = Int(PieceDraft.tempos.upperBound.rounded(.down)) + 1

    /// The cut of `minimum...maximum` (either bound optional); `nil` when the range is
    /// unbounded or lies within one bucket, where counting the pieces is as cheap.
    public init?(minimum: Double?, maximum: Double?) {
        guard minimum != nil || maximum != nil else { return nil }
        guard minimum?.isFinite ?? true, maximum?.isFinite ?? true else { return nil }
        // The bucket each bound falls in, held to the buckets that can hold a piece.
        func bucket(_ bound: Double) -> Int { Int(Swift.min(Swift.max(bound, 0), Double(Self.ceiling)).rounded(.down)) }
        let low = minimum.map(bucket), high = maximum.map(bucket)
        if let low, let high, high - low < 2 { return nil }
        let first = low.map { $0 + 1 } ?? 0, last = high.map { $0 - 1 } ?? Self.ceiling
        whole = first <= last ? first...last : nil
        var edges: [Edge] = []
        if let low { edges.append(Edge(from: nil, below: Double(low + 1))) }
        if let high { edges.append(Edge(from: Double(high), below: nil)) }
        self.edges = edges
    }
}
