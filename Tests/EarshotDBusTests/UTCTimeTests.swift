@testable import EarshotService
import Foundation
import Testing

/// `UTCTime`: UTC to the millisecond as Foundation's ISO 8601 style writes it, and RFC 3339
/// times read as Foundation's style reads them, without Foundation's calendar.
@Suite struct UTCTimeTests {
    @Test func knownInstantsAreWrittenInUTC() {
        #expect(UTCTime.text(seconds: 0, nanoseconds: 0) == "1970-01-01T00:00:00.000")
        #expect(UTCTime.text(seconds: 1_764_143_529, nanoseconds: 775_999_999) == "2025-11-26T07:52:09.775")
        #expect(UTCTime.text(seconds: 951_782_400, nanoseconds: 1_000_000) == "2000-02-29T00:00:00.001")
        #expect(UTCTime.text(seconds: 1_709_208_123, nanoseconds: 45_000_000, zoneDesignator: true)
                == "2024-02-29T12:02:03.045Z")
        #expect(UTCTime.text(seconds: 4_102_444_799, nanoseconds: 999_000_000) == "2099-12-31T23:59:59.999")
    }

    /// Both forms against Foundation's: the log's (no designator) and RFC 3339's as
    /// earshot-pieces stores it.
    @Test func itAgreesWithFoundationsISO8601Style() {
        let logStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
            .year().month().day().time(includingFractionalSeconds: true)
        let storedStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let seconds = Int.random(in: 0...4_102_444_799, using: &generator)
            let milliseconds = Int.random(in: 0...999, using: &generator)
            let date = Date(timeIntervalSince1970: Double(seconds) + Double(milliseconds) / 1000 + 0.0004)
            let nanoseconds = milliseconds * 1_000_000 + 400_000
            #expect(UTCTime.text(seconds: seconds, nanoseconds: nanoseconds) == date.formatted(logStyle), "\(seconds).\(milliseconds)")
            #expect(UTCTime.text(seconds: seconds, nanoseconds: nanoseconds, zoneDesignator: true) == date.formatted(storedStyle),
                    "\(seconds).\(milliseconds)")
        }
    }

    @Test func nowIsTheRealtimeClock() throws {
        let before = Date().timeIntervalSince1970
        let text = UTCTime.now(zoneDesignator: true)
        let after = Date().timeIntervalSince1970
        let parsed = try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
        #expect(parsed.timeIntervalSince1970 >= before - 0.001 && parsed.timeIntervalSince1970 <= after, "\(text)")
        #expect(text.utf8.count == 24)
        #expect(UTCTime.now().utf8.count == 23)
    }

    @Test func rfc3339TimesAreRead() throws {
        func stored(_ text: String) -> String? {
            UTCTime.parse(text).map { UTCTime.text(seconds: $0.seconds, nanoseconds: $0.nanoseconds, zoneDesignator: true) }
        }
        #expect(stored("2026-11-22T05:00:00Z") == "2026-11-22T05:00:00.000Z")
        #expect(stored("2026-11-22t05:00:00z") == "2026-11-22T05:00:00.000Z")
        #expect(stored("2026-11-22T07:30:00.25+02:30") == "2026-11-22T05:00:00.250Z")
        #expect(stored("2026-11-21T23:00:00.1239-06:00") == "2026-11-22T05:00:00.123Z")
        #expect(stored("2026-11-22T05:00:00.123456789123-00:00") == "2026-11-22T05:00:00.123Z")
        // Across a year's end, a leap day and the epoch; a leap second is the second after it.
        #expect(stored("2027-01-01T01:00:00+02:00") == "2026-12-31T23:00:00.000Z")
        #expect(stored("2024-02-29T23:59:59.999Z") == "2024-02-29T23:59:59.999Z")
        #expect(stored("1969-12-31T23:59:59.5Z") == "1969-12-31T23:59:59.500Z")
        #expect(stored("2016-12-31T23:59:60Z") == "2017-01-01T00:00:00.000Z")
        #expect(UTCTime.parse("1970-01-01T00:00:00Z")! == (0, 0))
        #expect(UTCTime.parse("2000-03-01T00:00:00.000000001Z")! == (951_868_800, 1))
        for bad in ["", "yesterday", "2026-11-22", "2026-11-22T05:00:00", "2026-11-22 05:00:00Z", "2026-11-22T05:00Z",
                    "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-02-29T00:00:00Z", "2100-02-29T00:00:00Z",
                    "2026-04-31T00:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T05:60:00Z", "2026-11-22T05:00:61Z",
                    "2026-11-22T05:00:00.Z", "2026-11-22T05:00:00+0200", "2026-11-22T05:00:00+24:00", "2026-11-22T05:00:00Zx",
                    "26-11-22T05:00:00Z", "2026-11-22T05:00:00\u{FF10}Z", "２026-11-22T05:00:00Z", "2026-11-22T05:00:00+02:00:00"] {
            #expect(UTCTime.parse(bad) == nil, "\(bad)")
        }
        #expect(UTCTime.parse("2000-02-29T00:00:00Z") != nil)
    }

    /// Random instants with random offsets and fractions, against Foundation's reading.
    @Test func itReadsAsFoundationsISO8601StyleDoes() throws {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let seconds = Int.random(in: 0...4_102_444_799, using: &generator)
            let milliseconds = Int.random(in: 0...999, using: &generator)
            let offsetMinutes = Int.random(in: -14 * 60...14 * 60, using: &generator)
            // The local wall-clock time at that offset.
            let local = UTCTime.text(seconds: seconds + offsetMinutes * 60, nanoseconds: milliseconds * 1_000_000)
            let sign = offsetMinutes < 0 ? "-" : "+"
            let offset = sign + String(format: "%02d:%02d", abs(offsetMinutes) / 60, abs(offsetMinutes) % 60)
            let text = local + offset
            let parsed = try #require(UTCTime.parse(text), "\(text)")
            #expect(parsed.seconds == seconds && parsed.nanoseconds == milliseconds * 1_000_000, "\(text)")
            let foundation = try style.parse(text).timeIntervalSince1970
            #expect(abs(foundation - (Double(parsed.seconds) + Double(parsed.nanoseconds) / 1e9)) < 0.0005, "\(text)")
        }
    }
}
