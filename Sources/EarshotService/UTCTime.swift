import Glibc

/// A time in UTC, ISO 8601 to the millisecond: `2026-11-26T07:42:09.775`, with `Z` after
/// it when asked (RFC 3339, the form earshot-pieces stores). Log lines on a terminal carry
/// the first form. `parse` reads any RFC 3339 time (a client's `CreatedAfter`).
///
/// Worked out with `gmtime_r`, not with Foundation's ISO 8601 format style: that style
/// builds a Gregorian calendar and looks up the current time zone, which in an executable
/// that also links FoundationInternationalization (earshot-pieces, through GRDB and
/// PostgresNIO) is ICU's. The first log line, and the first drop, then opened ICU's zone
/// data: about 16 MiB of the executable read from disk on a start from a cold page cache.
public enum UTCTime {
    /// Now, from the realtime clock.
    public static func now(zoneDesignator: Bool = false) -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return text(seconds: Int(now.tv_sec), nanoseconds: Int(now.tv_nsec), zoneDesignator: zoneDesignator)
    }

    /// `seconds` since the epoch plus `nanoseconds` (0..<1e9), truncated to milliseconds.
    public static func text(seconds: Int, nanoseconds: Int, zoneDesignator: Bool = false) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "time \(seconds)" }
        var text = ""
        text.reserveCapacity(24)
        append(Int(parts.tm_year) + 1900, digits: 4, to: &text)
        text.append("-")
        append(Int(parts.tm_mon) + 1, digits: 2, to: &text)
        text.append("-")
        append(Int(parts.tm_mday), digits: 2, to: &text)
        text.append("T")
        append(Int(parts.tm_hour), digits: 2, to: &text)
        text.append(":")
        append(Int(parts.tm_min), digits: 2, to: &text)
        text.append(":")
        append(Int(parts.tm_sec), digits: 2, to: &text)
        text.append(".")
        append(max(0, min(nanoseconds, 999_999_999)) / 1_000_000, digits: 3, to: &text)
        if zoneDesignator { text.append("Z") }
        return text
    }

    /// An RFC 3339 date-time (`2026-11-22T05:00:00Z`, `2026-11-22T07:00:00.25+02:00`; `T`
    /// and `Z` in either case, any number of fraction digits, `-00:00` as `Z`, a leap second
    /// as the second after it) as seconds since the epoch and nanoseconds (the fraction past
    /// nine digits dropped), or nil when `text` is not one.
    public static func parse(_ text: String) -> (seconds: Int, nanoseconds: Int)? {
        var reader = DigitReader(text)
        guard let year = reader.number(digits: 4), reader.skip("-"), let month = reader.number(digits: 2), reader.skip("-"),
              let day = reader.number(digits: 2), reader.skip("T", "t"), let hour = reader.number(digits: 2), reader.skip(":"),
              let minute = reader.number(digits: 2), reader.skip(":"), let second = reader.number(digits: 2) else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60, second <= 60 else {
            return nil
        }
        var nanoseconds = 0
        if reader.skip(".") {
            var digits = 0
            while let digit = reader.digit() {
                if digits < 9 { nanoseconds = nanoseconds * 10 + digit }
                digits += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 9) { nanoseconds *= 10 }
        }
        var offsetSeconds = 0
        if !reader.skip("Z", "z") {
            let sign: Int
            if reader.skip("+") { sign = 1 } else if reader.skip("-") { sign = -1 } else { return nil }
            guard let offsetHours = reader.number(digits: 2), reader.skip(":"), let offsetMinutes = reader.number(digits: 2),
                  offsetHours < 24, offsetMinutes < 60 else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        }
        guard reader.atEnd else { return nil }
        let seconds = daysSinceEpoch(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return (seconds, nanoseconds)
    }

    /// The days from 1970-01-01 to a date of the proleptic Gregorian calendar (negative
    /// before it), counted in 400-year cycles of 146 097 days from 0000-03-01, so that a
    /// leap day ends its year.
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let marchYear = month > 2 ? year : year - 1
        let cycle = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfCycle = marchYear - cycle * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfCycle = yearOfCycle * 365 + yearOfCycle / 4 - yearOfCycle / 100 + dayOfYear
        return cycle * 146_097 + dayOfCycle - 719_468
    }

    /// The days of `month` (1...12) in `year`.
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `value` in decimal, padded with zeros to at least `digits`.
    private static func append(_ value: Int, digits: Int, to text: inout String) {
        let decimal = String(value)
        if decimal.utf8.count < digits { text.append(String(repeating: "0", count: digits - decimal.utf8.count)) }
        text.append(decimal)
    }
}

/// Reads ASCII digits and separators off the front of a text, for `UTCTime.parse`.
private struct DigitReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ text: String) { bytes = Array(text.utf8) }

    var atEnd: Bool { position == bytes.count }

    /// The next byte's value as a digit, consumed; nil (nothing consumed) if it is not one.
    mutating func digit() -> Int? {
        guard position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) else { return nil }
        defer { position += 1 }
        return Int(bytes[position] - UInt8(ascii: "0"))
    }

    /// Exactly `digits` digits as a number.
    mutating func number(digits: Int) -> Int? {
        var value = 0
        for _ in 0..<digits {
            guard let digit = digit() else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    /// Consumes the next byte if it is one of `characters`.
    mutating func skip(_ characters: Unicode.Scalar...) -> Bool {
        guard position < bytes.count, characters.contains(where: { UInt8(ascii: $0) == bytes[position] }) else { return false }
        position += 1
        return true
    }
}
