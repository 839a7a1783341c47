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

    /// Whether the alert's audio silences other audio (a non-mixable claim on the audio
    /// session) rather than ducking it.
    public var silencesOthers: Bool { self == .voicecom || self == .emergency }

    /// Whether another client's non-mixable activation ends the alert: every priority
    /// but EMERGENCY gives way.
    public var yieldsToInterruptions: Bool { self != .emergency }

    /// The `media.role` the alert's audio carries on PipeWire.
    public var mediaRole: String {
        switch self {
        case .normal: "Notification"
        case .communication, .voicecom: "Communication"
        case .navigation: "Navigation"
        case .emergency: "Emergency"
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
