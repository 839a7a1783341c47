/// An alert's priority: its place in the queue, whether it preempts, and how many alerts
/// of it one owner may present in any 60 s window.
public enum AlertPriority: String, Sendable, CaseIterable, Comparable {
    case normal = "NORMAL"
    case communication = "COMMUNICATION"
    case navigation = "NAVIGATION"
    case voicecom = "VOICECOM"
    case emergency = "EMERGENCY"

    /// Higher ranks preempt lower ones and wait ahead of them.
    public var rank: Int {
        switch self {
        case .normal: 0
        case .communication: 1
        case .navigation: 2
        case .voicecom: 3
        case .emergency: 4
        }
    }

    /// At most this many alerts of this priority from one owner in any rolling window.
    public var rateLimit: Int {
        switch self {
        case .normal: 4
        case .communication: 6
        case .navigation: 15
        case .voicecom: 20
        case .emergency: 60
        }
    }

    public static func < (lhs: AlertPriority, rhs: AlertPriority) -> Bool { lhs.rank < rhs.rank }
}
