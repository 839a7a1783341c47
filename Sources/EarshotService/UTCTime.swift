import Glibc

/// A time in UTC, ISO 8601 to the millisecond: `2026-11-26T07:42:09.775`, with `Z` after
/// it when asked (RFC 3339, the form earshot-pieces stores). Log lines on a terminal carry
/// the first form.
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

    /// `value` in decimal, padded with zeros to at least `digits`.
    private static func append(_ value: Int, digits: Int, to text: inout String) {
        let decimal = String(value)
        if decimal.utf8.count < digits { text.append(String(repeating: "0", count: digits - decimal.utf8.count)) }
        text.append(decimal)
    }
}
