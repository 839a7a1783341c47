import Testing

/// How the scenarios tell a recording made of the microphone's samples (with the gaps a
/// graph's missed cycles leave) from one that is not: on made-up samples, no box needed.
@Suite struct RecordingGapsTests {
    /// A rising ramp: never silent, no run of it found twice.
    static let microphone: [Int16] = (0..<30000).map { Int16(1 + $0) }

    func gaps(_ take: [Int16]) throws -> (gaps: [BoxScenario.Gap], difference: String?) {
        let place = try #require(BoxScenario.place(take, in: Self.microphone))
        return BoxScenario.gaps(take, of: Self.microphone, at: place)
    }

    @Test func anExactRunHasNoGap() throws {
        let result = try gaps([0, 0] + Array(Self.microphone[1000..<20000]))
        #expect(result.gaps.isEmpty && result.difference == nil)
    }

    @Test func missingAndSilentQuantaAreGaps() throws {
        let m = Self.microphone
        // A quantum missing; then one in the place of the next, which is silent.
        let take = Array(m[0..<4096]) + Array(m[4608..<5120]) + Array(repeating: 0, count: 512) + Array(m[5120..<12000])
        let result = try gaps(take)
        #expect(result.difference == nil)
        #expect(result.gaps == [.init(missing: 512, silent: 0), .init(missing: 0, silent: 512)])
    }

    @Test func anythingElseIsNotTheMicrophones() throws {
        let m = Self.microphone
        // Samples repeated: what follows is earlier in the microphone's.
        #expect(try gaps(Array(m[0..<4096]) + Array(m[3584..<8000])).difference != nil)
        // Another sound in the middle.
        #expect(try gaps(Array(m[0..<4096]) + Array(repeating: 7, count: 512) + Array(m[4608..<8000])).difference != nil)
        // One sample altered.
        var altered = Array(m[0..<8000])
        altered[5000] &+= 1
        #expect(try gaps(altered).difference != nil)
    }
}
