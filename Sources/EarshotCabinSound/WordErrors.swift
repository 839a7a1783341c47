/// The word errors of a recogniser's hypothesis against what was said: a Levenshtein
/// alignment over words, split into substitutions, deletions (said, not heard) and
/// insertions (heard, not said). Sums over utterances with `+`.
public struct WordErrors: Codable, Sendable, Equatable {
    public var substitutions = 0
    public var deletions = 0
    public var insertions = 0
    /// Words said (the reference's length).
    public var words = 0

    public init() {}

    public init(substitutions: Int, deletions: Int, insertions: Int, words: Int) {
        self.substitutions = substitutions
        self.deletions = deletions
        self.insertions = insertions
        self.words = words
    }

    /// Aligns `hypothesis` to `reference` (both split at white space, case ignored) with
    /// the fewest errors; among alignments with as few, the one with the most
    /// substitutions (a word heard wrong rather than one lost and one made up).
    public init(reference: String, hypothesis: String) {
        let said = reference.lowercased().split(whereSeparator: \.isWhitespace)
        let heard = hypothesis.lowercased().split(whereSeparator: \.isWhitespace)
        // cost[i][j]: the fewest errors aligning said[..<i] with heard[..<j].
        var cost = [[Int]](repeating: [Int](repeating: 0, count: heard.count + 1), count: said.count + 1)
        for i in 0 ... said.count { cost[i][0] = i }
        for j in 0 ... heard.count { cost[0][j] = j }
        for i in stride(from: 1, through: said.count, by: 1) {
            for j in stride(from: 1, through: heard.count, by: 1) {
                let diagonal = cost[i - 1][j - 1] + (said[i - 1] == heard[j - 1] ? 0 : 1)
                cost[i][j] = min(diagonal, cost[i - 1][j] + 1, cost[i][j - 1] + 1)
            }
        }
        var i = said.count, j = heard.count
        while i > 0 || j > 0 {
            if i > 0, j > 0, cost[i][j] == cost[i - 1][j - 1] + (said[i - 1] == heard[j - 1] ? 0 : 1) {
                if said[i - 1] != heard[j - 1] { substitutions += 1 }
                i -= 1
                j -= 1
            } else if i > 0, cost[i][j] == cost[i - 1][j] + 1 {
                deletions += 1
                i -= 1
            } else {
                insertions += 1
                j -= 1
            }
        }
        words = said.count
    }

    public var errors: Int { substitutions + deletions + insertions }

    /// Errors per word said, in percent (0 when nothing was said).
    public var percent: Double { words == 0 ? 0 : 100 * Double(errors) / Double(words) }

    public static func + (left: WordErrors, right: WordErrors) -> WordErrors {
        WordErrors(substitutions: left.substitutions + right.substitutions, deletions: left.deletions + right.deletions,
                   insertions: left.insertions + right.insertions, words: left.words + right.words)
    }

    public static func += (left: inout WordErrors, right: WordErrors) { left = left + right }
}
