import ContractCore
import PiecesCore
import Testing

@Suite struct ValidationTests {
    func errorName(_ draft: PieceDraft) -> String? {
        do {
            try draft.validate()
            return nil
        } catch {
            return error.errorName
        }
    }

    @Test func titleBoundaries() {
        #expect(errorName(PieceDraft(title: "")) == EarshotErrorName.titleTooShort.shortName)
        #expect(errorName(PieceDraft(title: "a")) == nil)
        let fifty = String(repeating: "🎸", count: 50)
        #expect(fifty.unicodeScalars.count == 50)
        #expect(errorName(PieceDraft(title: fifty)) == nil)
        #expect(errorName(PieceDraft(title: fifty + "x")) == EarshotErrorName.titleTooLong.shortName)
        // Scalars, not grapheme clusters: a flag is two.
        #expect(errorName(PieceDraft(title: String(repeating: "🇸🇪", count: 25))) == nil)
        #expect(errorName(PieceDraft(title: String(repeating: "🇸🇪", count: 25) + "x")) == EarshotErrorName.titleTooLong.shortName)
        #expect(errorName(PieceDraft(title: "t", description: String(repeating: "d", count: 140))) == nil)
        #expect(errorName(PieceDraft(title: "t", description: String(repeating: "d", count: 141))) == EarshotErrorName.invalidData.shortName)
    }

    @Test func lengthBoundaries() throws {
        #expect(errorName(PieceDraft(title: "t", lengthMicroseconds: 1)) == nil)
        #expect(errorName(PieceDraft(title: "t", lengthMicroseconds: 1_200_000_000)) == nil)
        #expect(errorName(PieceDraft(title: "t", lengthMicroseconds: 0)) == EarshotErrorName.pieceTooShort.shortName)
        #expect(errorName(PieceDraft(title: "t", lengthMicroseconds: 1_200_000_001)) == EarshotErrorName.pieceTooLong.shortName)
        // Measured against the mix stem: within 1 %.
        #expect(try PieceDraft(title: "t").validate(measuredMicroseconds: 4_000_000) == 4_000_000)
        #expect(try PieceDraft(title: "t", lengthMicroseconds: 4_040_000).validate(measuredMicroseconds: 4_000_000) == 4_040_000)
        #expect(throws: RuleViolation.self) { try PieceDraft(title: "t", lengthMicroseconds: 4_040_001).validate(measuredMicroseconds: 4_000_000) }
        #expect(throws: RuleViolation(.pieceTooLong, field: .mixStem, "1200000001 µs is longer than 1200000000 µs (20 minutes)")) {
            try PieceDraft(title: "t").validate(measuredMicroseconds: 1_200_000_001)
        }
    }

    @Test func tempoBoundaries() {
        #expect(errorName(PieceDraft(title: "t", tempo: 1)) == nil)
        #expect(errorName(PieceDraft(title: "t", tempo: 999.999)) == nil)
        #expect(errorName(PieceDraft(title: "t", tempo: 0.999)) == EarshotErrorName.tempoTooLow.shortName)
        #expect(errorName(PieceDraft(title: "t", tempo: 1000)) == EarshotErrorName.tempoTooHigh.shortName)
        #expect(errorName(PieceDraft(title: "t", tempo: .nan)) == EarshotErrorName.tempoTooLow.shortName)
    }

    @Test func loopMarkers() throws {
        func loop(_ start: UInt64?, _ end: UInt64?, length: UInt64? = 1000) -> String? {
            errorName(PieceDraft(title: "t", lengthMicroseconds: length, loopStart: start, loopEnd: end))
        }
        #expect(loop(0, 1000) == nil)
        #expect(loop(10, 20) == nil)
        let invalid = EarshotErrorName.invalidLoopMarkers.shortName
        #expect(loop(0, 1001) == invalid)  // past the end
        #expect(loop(20, 20) == invalid)   // equal
        #expect(loop(30, 20) == invalid)   // reversed
        #expect(loop(0, nil) == invalid)   // one without the other
        #expect(loop(nil, 10) == invalid)
        // Against the measured length when none is given.
        #expect(throws: RuleViolation.self) { try PieceDraft(title: "t", loopStart: 0, loopEnd: 5_000_001).validate(measuredMicroseconds: 5_000_000) }
        #expect(try PieceDraft(title: "t", loopStart: 0, loopEnd: 5_000_000).validate(measuredMicroseconds: 5_000_000) == 5_000_000)
    }

    @Test func timeSignatures() throws {
        _ = try TimeSignature(upper: 4, lower: 4)
        _ = try TimeSignature(upper: 16, lower: 16)
        _ = try TimeSignature(upper: 1, lower: 2)
        for (upper, lower) in [(4, 5), (17, 4), (0, 4), (4, 0), (4, 3), (4, 32)] as [(UInt8, UInt8)] {
            #expect(throws: RuleViolation.self, "\(upper)/\(lower)") { try TimeSignature(upper: upper, lower: lower) }
        }
    }

    @Test func tonality() throws {
        let major = [true, false, true, false, true, true, false, true, false, true, false, true]
        #expect(try Tonality(name: "tonal", scale: major, root: 0) == .tonal(scale: major, root: 0))
        #expect(try Tonality(name: "tonal", scale: major, root: 0).scaleMask == 0b1010_1011_0101)
        #expect(Tonality.stored(name: "tonal", scaleMask: 0b1010_1011_0101, root: 0) == .tonal(scale: major, root: 0))
        #expect(try Tonality(name: "unknown", scale: nil, root: nil) == .unknown)
        #expect(try Tonality(name: "atonal", scale: nil, root: nil) == .atonal)
        let bad: [(String, [Bool]?, UInt8?)] = [
            ("tonal", nil, 0), ("tonal", Array(major.prefix(11)), 0), ("tonal", Array(repeating: false, count: 12), 0),
            ("tonal", major, 1), ("tonal", major, 12), ("tonal", major, nil), ("major", nil, nil), ("atonal", major, nil),
        ]
        for (name, scale, root) in bad {
            #expect(throws: RuleViolation.self, "\(name) \(String(describing: scale)) \(String(describing: root))") {
                try Tonality(name: name, scale: scale, root: root)
            }
        }
    }

    @Test func queries() throws {
        var query = PieceQuery()
        try query.validate()
        query.limit = 500
        try query.validate()
        query.limit = 501
        #expect(throws: RuleViolation.self) { try query.validate() }
        query.limit = 0
        #expect(throws: RuleViolation.self) { try query.validate() }
        query.limit = 50
        query.tempoMin = 120
        query.tempoMax = 100
        #expect(throws: RuleViolation.self) { try query.validate() }
        query.tempoMax = 120
        try query.validate()
        query.tonality = "major"
        #expect(throws: RuleViolation.self) { try query.validate() }
    }
}

@Suite struct PermissionTests {
    @Test func deleteRule() {
        #expect(DeletePermission.allowed(callerUID: 1000, authorUID: 1000, serviceUID: 998))
        #expect(DeletePermission.allowed(callerUID: 0, authorUID: 1000, serviceUID: 998))
        #expect(DeletePermission.allowed(callerUID: 998, authorUID: 1000, serviceUID: 998))
        #expect(!DeletePermission.allowed(callerUID: 1001, authorUID: 1000, serviceUID: 998))
    }
}
