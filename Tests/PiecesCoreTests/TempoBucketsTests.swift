import PiecesCore
import Testing

@Suite struct TempoBucketsTests {
    /// How many of `tempos` the cut counts: whole buckets by `floor`, edges one by one, each
    /// piece also within the range (as the count's filter keeps it).
    func counted(_ tempos: [Double?], _ cut: TempoBuckets, minimum: Double?, maximum: Double?) -> Int {
        tempos.reduce(0) { total, tempo in
            guard let tempo else { return total }
            if let whole = cut.whole, whole.contains(Int(tempo.rounded(.down))) { return total + 1 }
            let inRange = tempo >= (minimum ?? -.infinity) && tempo <= (maximum ?? .infinity)
            let onEdges = cut.edges.filter { tempo >= ($0.from ?? -.infinity) && tempo < ($0.below ?? .infinity) }.count
            return total + (inRange ? onEdges : 0)
        }
    }

    @Test func wholeBucketsAndEdgesCountEachPieceInTheRangeOnce() {
        var generator = SystemRandomNumberGenerator()
        // Whole tempos, tempos a hair either side of a whole one, and none.
        var tempos: [Double?] = [nil, 1, 999.999, 120, 120.0.nextDown, 120.0.nextUp, 100, 99.5]
        for _ in 0..<2000 { tempos.append(Double.random(in: 1...999.999, using: &generator)) }
        tempos.append(contentsOf: (1...999).map { Double($0) })
        let bounds: [Double?] = [nil, -5, 0, 1, 1.5, 99.5, 100, 100.0.nextUp, 119.99, 120, 121, 500.25, 999.999, 1000, 5000]
        for minimum in bounds {
            for maximum in bounds {
                if let minimum, let maximum, minimum > maximum { continue }
                let expected = tempos.filter { tempo in
                    guard let tempo else { return minimum == nil && maximum == nil }
                    return tempo >= (minimum ?? -.infinity) && tempo <= (maximum ?? .infinity)
                }.count
                guard let cut = TempoBuckets(minimum: minimum, maximum: maximum) else {
                    // Not cut: unbounded, or narrow enough to count directly.
                    // (Bounds beyond any tempo are held to 0...1000 first.)
                    func bucket(_ bound: Double) -> Int { Int(min(max(bound, 0), 1000).rounded(.down)) }
                    if let minimum, let maximum { #expect(bucket(maximum) - bucket(minimum) < 2) }
                    continue
                }
                #expect(counted(tempos, cut, minimum: minimum, maximum: maximum) == expected,
                        "\(String(describing: minimum))...\(String(describing: maximum))")
            }
        }
    }

    @Test func theCommonestBrowseIsMostlyWholeBuckets() throws {
        let cut = try #require(TempoBuckets(minimum: 100, maximum: 120))
        #expect(cut.whole == 101...119)
        #expect(cut.edges == [.init(from: nil, below: 101), .init(from: 120, below: nil)])
        #expect(TempoBuckets(minimum: nil, maximum: nil) == nil)
        #expect(TempoBuckets(minimum: 100.2, maximum: 101.9) == nil)
        #expect(TempoBuckets(minimum: .nan, maximum: 120) == nil)
        #expect(TempoBuckets(minimum: 90, maximum: nil)?.whole == 91...1000)
        #expect(TempoBuckets(minimum: nil, maximum: 90)?.whole == 0...89)
    }
}
