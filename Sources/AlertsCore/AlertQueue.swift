/// The presenter's state machine: one alert presented at a time, the rest waiting in
/// priority order (FIFO within a priority, at most `maxWaiting`), preemption, rejections
/// with try-again times, and the timers that dismiss alerts. Time is milliseconds on a
/// monotonic clock the caller passes in; nothing here reads a clock.
public struct AlertQueue: Sendable {
    public static let maxWaiting = 16

    /// What the queue needs to know of an alert.
    public struct Entry: Sendable, Equatable {
        public let id: UInt64
        public let owner: String
        public let priority: AlertPriority
        /// How long it stays up once presented (the button timeout when it has buttons);
        /// 0 for speech only.
        public let durationMs: UInt64
        public let hasButtons: Bool
        public let hasAudio: Bool
        /// Whether the owner leaving the bus ends it (`OutliveOwner` turns this off).
        public let endsWithOwner: Bool

        public init(id: UInt64, owner: String, priority: AlertPriority, durationMs: UInt64, hasButtons: Bool, hasAudio: Bool,
                    endsWithOwner: Bool = true) {
            self.endsWithOwner = endsWithOwner
            self.id = id
            self.owner = owner
            self.priority = priority
            self.durationMs = durationMs
            self.hasButtons = hasButtons
            self.hasAudio = hasAudio
        }
    }

    /// What happened, in order, for the caller to carry out.
    public enum Event: Sendable, Equatable {
        /// The alert became current: show it, play its audio.
        case presented(UInt64)
        /// The alert is done (it was queued or presented); stop whatever it was doing.
        case completed(UInt64, AlertEnd)
        /// A `KEEP_CONTEXT` or `STEAL_FOCUS` button of the presented alert was pressed:
        /// tell its owner (before any completion that follows).
        case buttonPressed(UInt64, UInt16)
    }

    public enum Placement: Sendable, Equatable {
        case queued, presenting
    }

    private struct Presenting: Sendable {
        let entry: Entry
        var deadline: UInt64
        var audioEnded: Bool
        /// When its audio will have played out, once that is known.
        var audioPlayedOut: UInt64?
    }

    /// Added to a predicted audio end for the end published and the try-again times built
    /// on it: a little of what the device does after its last frame.
    public static let playedOutMarginMs: UInt64 = 50

    /// How long past its predicted end an alert's audio may still be playing (an underrun,
    /// a loaded CPU, an output slower than it said) before the alert ends without waiting
    /// for it: a device that stopped playing altogether does not hold the queue.
    public static let stalledAudioGraceMs: UInt64 = 3000

    /// The try-again time behind something whose end is still not known when a request
    /// must be answered: a presented alert's audio, a microphone pass-thru's prompt (the
    /// service waits for it first; this is for a rendering slower than that wait). Asked
    /// again then, the service will know, and a time that has already passed is never named.
    public static let unknownEndRetryMs: UInt64 = 1000

    private var current: Presenting?
    private var waiting: [Entry] = []
    private var rates = RateWindow()

    public init() {}

    public var currentID: UInt64? { current?.entry.id }
    public var waitingCount: Int { waiting.count }

    public func placement(of id: UInt64) -> Placement? {
        if current?.entry.id == id { return .presenting }
        return waiting.contains { $0.id == id } ? .queued : nil
    }

    /// When `advance` next has something to do, if ever: for the presented alert, when it
    /// ends unless a press, a cancel or a preemption ends it sooner. With buttons, its
    /// button timeout; without, its timeout or, when later, its audio's end, which the
    /// device reports (`audioEnded`), never a prediction: until then only the bound past
    /// which a stalled device is given up (`stalledAudioGraceMs` after the predicted end).
    public var nextDeadline: UInt64? {
        guard let current else { return nil }
        guard current.entry.hasAudio, !current.entry.hasButtons, !current.audioEnded else { return current.deadline }
        guard let playedOut = current.audioPlayedOut else { return nil }
        return max(current.deadline, playedOut + Self.stalledAudioGraceMs)
    }

    /// When the presented alert is expected to end, if known: what `EndsAtMonotonicUs`
    /// says and try-again times count from. Its timeout or, while its audio plays, when
    /// that is predicted to have played out (once rendered to the end).
    public var expectedEnd: UInt64? {
        guard let current else { return nil }
        guard current.entry.hasAudio, !current.entry.hasButtons, !current.audioEnded else { return current.deadline }
        guard let playedOut = current.audioPlayedOut else { return nil }
        return max(current.deadline, playedOut + Self.playedOutMarginMs)
    }

    /// Whether an alert of `priority` would find no room now: the queue is full and the
    /// presented alert is not one it preempts.
    public func isFull(for priority: AlertPriority) -> Bool {
        guard let current else { return false }
        return !(priority > current.entry.priority) && waiting.count >= Self.maxWaiting
    }

    // MARK: Submitting

    /// Either the alert is rejected (it completes at once, never queued), or accepted with
    /// what that set off (a preemption, its presentation).
    public enum Submission: Sendable, Equatable {
        case rejected(AlertEnd)
        case accepted([Event])
    }

    /// Accepts `entry` unless a rule says no. Of several rules that say no, the one whose
    /// try-again time is longest wins: the same request is accepted once all have passed.
    /// `captureRemainingMs` is how much longer a microphone pass-thru records (nil: none).
    public mutating func submit(_ entry: Entry, now: UInt64, captureRemainingMs: UInt64?) -> Submission {
        var refusals: [(AlertEndReason, UInt64)] = []
        if let wait = rates.wait(owner: entry.owner, priority: entry.priority, now: now) {
            refusals.append((.rateLimited, wait))
        }
        if let remaining = captureRemainingMs, remaining > 0, entry.priority < .emergency {
            refusals.append((.captureActive, remaining))
        }
        let preempts = current.map { entry.priority > $0.entry.priority } ?? true
        if !preempts, waiting.count >= Self.maxWaiting, let current {
            // Room appears when the current alert ends and the first waiting one moves up;
            // while its audio's end is not known yet, no earlier than its timeout and never
            // sooner than the queue can know more.
            let end = max(expectedEnd ?? max(current.deadline, now + Self.unknownEndRetryMs), now + 1)
            refusals.append((.queueFull, end - now))
        }
        if let (reason, wait) = refusals.max(by: { $0.1 < $1.1 }) {
            return .rejected(AlertEnd(reason, tryAgainMs: UInt32(clamping: max(wait, 1))))
        }
        rates.record(owner: entry.owner, priority: entry.priority, now: now)
        var events: [Event] = []
        if let current, preempts {
            events.append(.completed(current.entry.id, AlertEnd(.preempted)))
            self.current = nil
        }
        if self.current == nil {
            present(entry, now: now, events: &events)
        } else {
            let index = waiting.firstIndex { $0.priority < entry.priority } ?? waiting.endIndex
            waiting.insert(entry, at: index)
        }
        return .accepted(events)
    }

    // MARK: Ending

    /// The owner's `Cancel`: removed when queued, dismissed when presented.
    public mutating func cancel(_ id: UInt64, now: UInt64) -> [Event] {
        end(id, AlertEnd(.cancelled), now: now)
    }

    /// The user pressed a button of the presented alert (the caller checked that it has
    /// it), as SDL's `SystemAction` says: `DEFAULT_ACTION` ends the alert with the press;
    /// `KEEP_CONTEXT` reports the press and leaves the alert up, its timeout started anew;
    /// `STEAL_FOCUS` reports the press and ends the alert asking for its app to come forward.
    public mutating func pressButton(_ id: UInt64, button: UInt16, action: SoftButton.SystemAction = .defaultAction,
                                     now: UInt64) -> [Event] {
        guard let presented = current, presented.entry.id == id else { return [] }
        switch action {
        case .defaultAction:
            return end(id, AlertEnd(.button, pressedButton: button), now: now)
        case .keepContext:
            current?.deadline = now + presented.entry.durationMs
            return [.buttonPressed(id, button)]
        case .stealFocus:
            var how = AlertEnd(.button, pressedButton: button)
            how.focusRequested = true
            return [.buttonPressed(id, button)] + end(id, how, now: now)
        }
    }

    /// Another client's non-mixable activation interrupted the alert's audio: it ends
    /// (`interrupted`) unless its priority holds on (EMERGENCY).
    public mutating func interrupt(_ id: UInt64, now: UInt64) -> [Event] {
        guard let current, current.entry.id == id, current.entry.priority.yieldsToInterruptions else { return [] }
        return end(id, AlertEnd(.interrupted), now: now)
    }

    /// The user dismissed the presented alert.
    public mutating func dismiss(_ id: UInt64, now: UInt64) -> [Event] {
        guard current?.entry.id == id else { return [] }
        return end(id, AlertEnd(.dismissed), now: now)
    }

    /// The presented alert's display timed out elsewhere (a desktop notification expired).
    public mutating func expire(_ id: UInt64, now: UInt64) -> [Event] {
        guard current?.entry.id == id else { return [] }
        return end(id, AlertEnd(.timeout), now: now)
    }

    /// The presented alert's audio has finished playing: the device has played its last
    /// frame (or failed). Without buttons, the alert ends now unless its timeout is later,
    /// or its predicted end: a device that drains faster than real time (a file) ends early,
    /// and the alert stays as long as the audio would have played.
    public mutating func audioEnded(_ id: UInt64, now: UInt64) -> [Event] {
        guard let presented = current, presented.entry.id == id else { return [] }
        if let playedOut = presented.audioPlayedOut {
            current?.deadline = max(presented.deadline, playedOut + Self.playedOutMarginMs)
        }
        current?.audioEnded = true
        return advance(now: now)
    }

    /// The presented alert's audio is rendered to its end, and is predicted to have played
    /// out at `playedOut`: from now on its end is expected (`expectedEnd`).
    public mutating func audioWillEnd(_ id: UInt64, playedOut: UInt64) {
        guard current?.entry.id == id, current?.audioEnded == false else { return }
        current?.audioPlayedOut = playedOut
    }

    /// Everything `owner` has, queued or presented, ends with `owner-vanished` (but for
    /// alerts that outlive their owner).
    public mutating func ownerVanished(_ owner: String, now: UInt64) -> [Event] {
        var events: [Event] = []
        let ending = { (entry: Entry) in entry.owner == owner && entry.endsWithOwner }
        for entry in waiting where ending(entry) {
            events.append(.completed(entry.id, AlertEnd(.ownerVanished)))
        }
        waiting.removeAll(where: ending)
        // Unique names are never reused: its acceptance times can go.
        rates.forget(owner: owner)
        if let current, ending(current.entry) {
            events += end(current.entry.id, AlertEnd(.ownerVanished), now: now)
        }
        return events
    }

    /// Ends the presented alert when its time is up (and, without buttons, its audio has
    /// ended too), then presents the next.
    public mutating func advance(now: UInt64) -> [Event] {
        guard let deadline = nextDeadline, now >= deadline, let current else { return [] }
        return end(current.entry.id, AlertEnd(.timeout), now: now)
    }

    private mutating func end(_ id: UInt64, _ how: AlertEnd, now: UInt64) -> [Event] {
        if let index = waiting.firstIndex(where: { $0.id == id }) {
            waiting.remove(at: index)
            return [.completed(id, how)]
        }
        guard current?.entry.id == id else { return [] }
        current = nil
        var events: [Event] = [.completed(id, how)]
        if !waiting.isEmpty {
            present(waiting.removeFirst(), now: now, events: &events)
        }
        return events
    }

    private mutating func present(_ entry: Entry, now: UInt64, events: inout [Event]) {
        current = Presenting(entry: entry, deadline: now + entry.durationMs, audioEnded: !entry.hasAudio)
        events.append(.presented(entry.id))
    }
}
