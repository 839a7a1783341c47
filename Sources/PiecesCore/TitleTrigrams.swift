/// How common each trigram of titles is, from a sample of them, and which word of a title
/// search an index of trigrams should look up.
///
/// A trigram index (PostgreSQL's `pg_trgm`, as `pg_trgm` makes trigrams: three lowercased
/// letters or digits of one word) answers `title ILIKE '%text%'` by reading the list of
/// titles holding each trigram of `text` and keeping those in every list. A trigram that
/// most titles hold has a list as long as the catalogue, read whole whatever the others
/// hold: searching "Piece 123456" where every title starts "Piece" reads a million entries
/// five times over to find one title. Looking up only the search's rarest word ("123456")
/// and checking the whole text on the few titles it finds gives the same pieces; any word
/// of the text is a part every matching title holds, so the choice changes only the time.
public struct TitleTrigrams: Sendable, Equatable {
    /// The share of sampled titles holding each trigram, for those at least `commonShare`.
    public let common: [String: Double]

    /// Below this share a trigram's list is short enough to read.
    public static let commonShare = 0.01

    /// From `counts` of sampled titles holding each trigram, out of `titles` sampled.
    public init(counts: [String: Int], titles: Int) {
        guard titles > 0 else {
            common = [:]
            return
        }
        common = counts.compactMapValues { count in
            let share = Double(count) / Double(titles)
            return share >= Self.commonShare ? share : nil
        }
    }

    /// The word of `text` to look up in place of the whole text, or `nil` when the whole
    /// text is as good: it has one word, no word is rare, or no other word is common.
    public func rarestWord(of text: String) -> String? {
        let words = Self.words(of: text)
        guard words.count > 1 else { return nil }
        // A word's lookup reads as much as its commonest trigram's list, and keeps no more
        // titles than its rarest trigram's: the rarest word is the one whose rarest
        // trigram is rarest (the longer of two alike).
        let rated = words.compactMap { word -> (word: String, rarest: Double, commonest: Double)? in
            let shares = Self.trigrams(of: word).map { common[$0] ?? 0 }
            guard let rarest = shares.min(), let commonest = shares.max() else { return nil }
            return (word, rarest, commonest)
        }
        guard let best = rated.min(by: { ($0.rarest, -$0.word.count) < ($1.rarest, -$1.word.count) }),
              best.rarest < Self.commonShare else { return nil }
        // Nothing gained unless another word would make the whole text's lookup read a
        // common trigram's list that the word's own does not.
        let others = words.filter { $0 != best.word }.flatMap { Self.trigrams(of: $0) }
        guard others.contains(where: { (common[$0] ?? 0) > best.commonest }) else { return nil }
        return best.word
    }

    /// The runs of letters and digits in `text`, as `pg_trgm` splits it into words.
    public static func words(of text: String) -> [String] {
        text.split(whereSeparator: { !($0.isLetter || $0.isNumber) }).map(String.init)
    }

    /// The trigrams inside `word` (lowercased), those any title holding it holds too.
    public static func trigrams(of word: String) -> [String] {
        let characters = Array(word.lowercased())
        guard characters.count >= 3 else { return [] }
        return (0...(characters.count - 3)).map { String(characters[$0..<($0 + 3)]) }
    }
}
