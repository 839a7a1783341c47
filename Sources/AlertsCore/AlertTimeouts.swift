/// The contract's timeout rules, in seconds.
public enum AlertTimeouts {
    /// `DefaultTimeout`'s and every requested timeout's range.
    public static let range: ClosedRange<Double> = 3...10
    public static let defaultTimeout: Double = 5
    public static let defaultButtonTimeout: Double = 60
    /// What `ButtonTimeout` may be set to.
    public static let buttonTimeoutRange: ClosedRange<Double> = 1...3600

    /// Clamps a value to `range` (a non-finite one becomes the default).
    public static func clamped(_ seconds: Double) -> Double {
        guard seconds.isFinite else { return defaultTimeout }
        return min(max(seconds, range.lowerBound), range.upperBound)
    }

    /// How long an alert stays up: with soft buttons `buttonTimeout` (the request's timeout
    /// is ignored); otherwise the requested timeout (0 or absent → `defaultTimeout`),
    /// clamped to 3...10.
    public static func effective(requested: Double?, defaultTimeout: Double, hasButtons: Bool,
                                 buttonTimeout: Double) -> Double {
        if hasButtons { return buttonTimeout }
        guard let requested, requested != 0 else { return clamped(defaultTimeout) }
        return clamped(requested)
    }

    /// Seconds to whole milliseconds.
    public static func milliseconds(_ seconds: Double) -> UInt64 {
        UInt64((seconds * 1000).rounded())
    }
}
