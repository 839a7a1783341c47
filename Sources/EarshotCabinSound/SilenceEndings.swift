/// Where pass-thrus that end on silence ended, against the moment the driver stopped
/// talking: a tally over scenes.
///
/// A pass-thru with `EndOnSilenceMs` should end once the driver has stopped and that much
/// quiet has followed: not before the driver's last word (it would cut the driver off, or
/// end before the driver began, on a pause in the far end's echo), and not long after it
/// (what plays in the cabin must not hold it open). An ending is
///   - `early`: before the driver's span ends;
///   - `onTime`: from the span's end to `endOnSilenceMs + allowanceMs` after it;
///   - `late`: later than that;
///   - `never`: the scene ended first.
public struct SilenceEndings: Codable, Sendable, Equatable {
    /// How much later than `EndOnSilenceMs` after the driver's last word still counts.
    public static let allowanceMs = 300

    public var early = 0
    public var onTime = 0
    public var late = 0
    public var never = 0
    /// For each ending that came after the driver's span: how long after the span's end
    /// it came, less `EndOnSilenceMs` (ms; negative when the driver's own trailing quiet
    /// counted towards it).
    public var pastSilenceMs: [Int] = []

    public init() {}

    public var scenes: Int { early + onTime + late + never }

    /// Counts one scene: the pass-thru ended at sample `end` (nil: not within the scene),
    /// the driver's span ended at sample `driverEnd`.
    public mutating func add(end: Int?, driverEnd: Int, endOnSilenceMs: Int, rate: Int) {
        guard let end else {
            never += 1
            return
        }
        guard end >= driverEnd else {
            early += 1
            return
        }
        let after = (end - driverEnd) * 1000 / rate
        pastSilenceMs.append(after - endOnSilenceMs)
        if after <= endOnSilenceMs + Self.allowanceMs { onTime += 1 } else { late += 1 }
    }

    /// The median and the largest of `pastSilenceMs`, when there is one.
    public var medianPastSilenceMs: Int? {
        guard !pastSilenceMs.isEmpty else { return nil }
        return pastSilenceMs.sorted()[pastSilenceMs.count / 2]
    }

    public var worstPastSilenceMs: Int? { pastSilenceMs.max() }

    /// Every scene ended on time.
    public var allOnTime: Bool { scenes > 0 && onTime == scenes }
}
