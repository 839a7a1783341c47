import EarshotSync
import Foundation
import PiecesCore
import PostgresNIO

/// The catalogue's title trigrams as last sampled (`TitleTrigrams`), and when.
struct TitleSample: Sendable {
    var trigrams: TitleTrigrams?
    var takenAt: ContinuousClock.Instant?
    var taking = false

    /// A sample older than this is taken again, in the background, at the next title search.
    static let maximumAge: Duration = .seconds(600)
    /// About how many titles a sample reads (all of them in a smaller catalogue).
    static let titles = 20_000
}

extension SharedPieceCatalogue {
    /// The title trigrams to plan a title search with: the first search waits for a
    /// sample; later ones use the last while an old one is taken again. A sample that
    /// cannot be taken leaves every search looking up its whole text.
    func titleTrigrams() async -> TitleTrigrams {
        let (current, due) = titleSample.withLock { sample -> (TitleTrigrams?, Bool) in
            let old = sample.takenAt.map { ContinuousClock.now - $0 > TitleSample.maximumAge } ?? true
            let due = old && !sample.taking
            if due { sample.taking = true }
            return (sample.trigrams, due)
        }
        guard due else { return current ?? TitleTrigrams(counts: [:], titles: 0) }
        guard let current else { return await sampleTitles() }
        Task { _ = await self.sampleTitles() }
        return current
    }

    /// Takes a sample of about `TitleSample.titles` titles and keeps it.
    private func sampleTitles() async -> TitleTrigrams {
        var trigrams = TitleTrigrams(counts: [:], titles: 0)
        do {
            trigrams = try await transaction(readOnly: true) { connection in
                let pieces = try await connection.values("SELECT coalesce(sum(n), 0)::bigint FROM piece_tally", Int.self, self.logger).first ?? 0
                let percent = min(100, max(0.001, 100 * Double(TitleSample.titles) / Double(max(pieces, 1))))
                // The percentage is a number made here; TABLESAMPLE takes no parameter of type double.
                var counts: [String: Int] = [:]
                var titles = 0
                for row in try await connection.rows(PostgresQuery(unsafeSQL: """
                    WITH sampled AS MATERIALIZED (SELECT title FROM piece TABLESAMPLE SYSTEM (\(String(format: "%.4f", percent))))
                    SELECT NULL::text, count(*) FROM sampled
                    UNION ALL
                    SELECT trigram, count(*) FROM sampled, unnest(show_trgm(sampled.title)) AS trigram GROUP BY trigram
                    """), self.logger) {
                    let (trigram, count) = try row.decode((String?, Int).self)
                    if let trigram { counts[trigram] = count } else { titles = count }
                }
                return TitleTrigrams(counts: counts, titles: titles)
            }
            logger.debug("title trigrams sampled: \(trigrams.common.count) common")
        } catch {
            logger.warning("the catalogue's titles could not be sampled (title searches look up their whole text): \(error)")
        }
        titleSample.withLock { $0 = TitleSample(trigrams: trigrams, takenAt: .now, taking: false) }
        return trigrams
    }
}
