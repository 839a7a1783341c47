import PiecesCore
import Testing

@Suite struct TitleTrigramsTests {
    /// A sample as the catalogue's would be: every title "Piece N", for N in 1...titles.
    func numberedPieces(_ titles: Int) -> TitleTrigrams {
        var counts: [String: Int] = [:]
        for number in 1...titles {
            for trigram in Set(TitleTrigrams.words(of: "Piece \(number)").flatMap(TitleTrigrams.trigrams)) {
                counts[trigram, default: 0] += 1
            }
        }
        return TitleTrigrams(counts: counts, titles: titles)
    }

    @Test func wordsAndTrigramsAsPgTrgmMakesThem() {
        #expect(TitleTrigrams.words(of: "Late-night  Groove #2, take 3") == ["Late", "night", "Groove", "2", "take", "3"])
        #expect(TitleTrigrams.words(of: "Müller: Straße") == ["Müller", "Straße"])
        #expect(TitleTrigrams.trigrams(of: "Piece") == ["pie", "iec", "ece"])
        #expect(TitleTrigrams.trigrams(of: "ab").isEmpty)
    }

    @Test func onlyCommonTrigramsAreKept() {
        let sample = TitleTrigrams(counts: ["pie": 1000, "123": 5, "456": 10], titles: 1000)
        #expect(sample.common == ["pie": 1.0, "456": 0.01])
        #expect(TitleTrigrams(counts: ["pie": 3], titles: 0).common.isEmpty)
    }

    @Test func theRareWordIsLookedUpInPlaceOfACommonOne() {
        let sample = numberedPieces(20000)
        #expect(sample.common["pie"] == 1.0)
        #expect(sample.rarestWord(of: "Piece 12345") == "12345")
        #expect(sample.rarestWord(of: "piece 1234 ") == "1234")
        // One word, or no word rare enough, or no common word to avoid: the whole text.
        #expect(sample.rarestWord(of: "Piece") == nil)
        #expect(sample.rarestWord(of: "12345") == nil)
        #expect(sample.rarestWord(of: "Piece 12") == nil)
        #expect(sample.rarestWord(of: "Piece 1") == nil)
        #expect(sample.rarestWord(of: "Groove 12345") == nil)
        // Without a sample every word is as rare as another: the whole text.
        #expect(TitleTrigrams(counts: [:], titles: 0).rarestWord(of: "Piece 12345") == nil)
    }
}
