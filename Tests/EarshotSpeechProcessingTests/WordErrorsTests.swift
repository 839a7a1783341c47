import EarshotCabinSound
import Testing

/// The recogniser judge's arithmetic: word errors split into substitutions, deletions
/// and insertions, as the echo benchmark sums them.
@Suite struct WordErrorsTests {
    @Test func theSameWordsAreNoError() {
        let errors = WordErrors(reference: "turn left at the next intersection", hypothesis: "Turn  left at the next intersection")
        #expect(errors == WordErrors(substitutions: 0, deletions: 0, insertions: 0, words: 6))
        #expect(errors.percent == 0)
    }

    @Test func eachKindOfErrorIsCountedAsWhatItIs() {
        #expect(WordErrors(reference: "call home", hypothesis: "call work")
            == WordErrors(substitutions: 1, deletions: 0, insertions: 0, words: 2))
        #expect(WordErrors(reference: "turn left and call mom", hypothesis: "turn left")
            == WordErrors(substitutions: 0, deletions: 3, insertions: 0, words: 5))
        // Leftover echo made into commands around the driver's word: all insertions.
        #expect(WordErrors(reference: "stop", hypothesis: "repeat that and stop then cancel")
            == WordErrors(substitutions: 0, deletions: 0, insertions: 5, words: 1))
        #expect(WordErrors(reference: "navigate to work", hypothesis: "")
            == WordErrors(substitutions: 0, deletions: 3, insertions: 0, words: 3))
    }

    @Test func aWordHeardWrongIsOneSubstitutionNotADeletionAndAnInsertion() {
        let errors = WordErrors(reference: "play music then turn left", hypothesis: "play the radio then turn right")
        #expect(errors == WordErrors(substitutions: 2, deletions: 0, insertions: 1, words: 5))
        #expect(errors.errors == 3)
        #expect(errors.percent == 60)
    }

    @Test func utterancesSumAndTheRateIsOverEveryWordSaid() {
        var total = WordErrors()
        total += WordErrors(reference: "stop", hypothesis: "stop and stop")
        total += WordErrors(reference: "call home", hypothesis: "call")
        total += WordErrors(reference: "cancel", hypothesis: "play music")
        #expect(total == WordErrors(substitutions: 1, deletions: 1, insertions: 3, words: 4))
        #expect(total.percent == 125)
        #expect(WordErrors().percent == 0)
    }
}
