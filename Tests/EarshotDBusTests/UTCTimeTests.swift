@testable import EarshotService
import Foundation
import Testing

/// `UTCTime`: UTC to the millisecond as Foundation's ISO 8601 style writes it, without
/// Foundation's calendar.
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
}
