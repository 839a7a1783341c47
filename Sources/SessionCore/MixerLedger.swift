/// A change to send to the mixer: a stream's master gain and mute (nil: unchanged).
public struct MixerCommand: Sendable, Equatable {
    public let stream: UInt32
    public let volume: Double?
    public let muted: Bool?

    public init(stream: UInt32, volume: Double?, muted: Bool?) {
        self.stream = stream
        self.volume = volume
        self.muted = muted
    }
}

/// What the session has changed on the mixer, so that every stream gets its own level
/// back: each changed stream's level as found and the level set on it. Kept on disk
/// (`Codable`) before each change is sent, so that a service killed mid-duck restores on
/// its next start.
///
/// Two things are more than bookkeeping:
/// - A user who changes a stream while it is lowered has set its level: that becomes the
///   level to restore, and the policy lowers from it.
/// - WirePlumber remembers a stream's last volume by role or application and gives it to
///   the next such stream. A stream that ends while lowered leaves its lowered level there
///   (a *leak*); the next stream under that key that arrives at exactly that level gets the
///   level the first had as found.
public struct MixerLedger: Sendable, Equatable, Codable {
    public struct Level: Sendable, Equatable, Codable {
        public var volume: Double
        public var muted: Bool

        public init(volume: Double, muted: Bool) {
            self.volume = volume
            self.muted = muted
        }

        func matches(_ other: Level) -> Bool {
            muted == other.muted && abs(volume - other.volume) <= MixerLedger.tolerance
        }
    }

    public struct Entry: Sendable, Equatable, Codable {
        public var serial: UInt64
        public var restoreKey: String
        /// The stream's own level: as found, or as its user set it since.
        public var found: Level
        /// The level last sent.
        public var applied: Level
        /// Sent and not yet seen back from the mixer: until it is, what the mixer reports
        /// is older than the change and says nothing about the user.
        public var pending: Bool
    }

    public struct Leak: Sendable, Equatable, Codable {
        public var found: Level
        public var applied: Level
    }

    /// Gains closer than this are the same (the mixer stores 32-bit floats).
    public static let tolerance = 1e-4
    /// Leaks kept at most; the oldest go first.
    public static let leakLimit = 64

    public private(set) var entries: [UInt32: Entry] = [:]
    public private(set) var leaks: [String: Leak] = [:]
    private var leakOrder: [String] = []

    public init() {}

    public var isEmpty: Bool { entries.isEmpty && leaks.isEmpty }

    /// The stream's own level (as found, not as lowered).
    public func ownLevel(of stream: MixerStream) -> Level {
        if let entry = entries[stream.id], entry.serial == stream.serial { return entry.found }
        return Level(volume: stream.volume, muted: stream.muted)
    }

    /// The commands that bring every stream to its treatment, with `duckLevel` the gain a
    /// ducked stream gets relative to its own level. Streams no longer listed are treated
    /// as gone (see `removed`).
    public mutating func plan(streams: [MixerStream], treatments: [UInt32: StreamTreatment], duckLevel: Double) -> [MixerCommand] {
        let present = Set(streams.map(\.id))
        for id in entries.keys where !present.contains(id) { removed(id) }
        var commands: [MixerCommand] = []
        for stream in streams.sorted(by: { $0.id < $1.id }) {
            if let command = step(stream, treatment: treatments[stream.id] ?? .untouched, duckLevel: duckLevel) {
                commands.append(command)
            }
        }
        return commands
    }

    /// A stream has gone: if it was lowered, its key's next stream may arrive lowered.
    public mutating func removed(_ id: UInt32) {
        guard let entry = entries.removeValue(forKey: id) else { return }
        guard !entry.applied.matches(entry.found) else { return }
        if leaks.updateValue(Leak(found: entry.found, applied: entry.applied), forKey: entry.restoreKey) == nil {
            leakOrder.append(entry.restoreKey)
        }
        while leakOrder.count > Self.leakLimit {
            leaks.removeValue(forKey: leakOrder.removeFirst())
        }
    }

    /// What must survive a crash: the ledger without the `pending` marks, which only say
    /// what the mixer has not echoed yet.
    public var durable: MixerLedger {
        var copy = self
        copy.forgetPending()
        return copy
    }

    /// Drops the entries whose restore has been sent (their level as found is what they
    /// were last given): the mixer has them back, nothing of ours is left on them.
    public mutating func settleRestored() {
        entries = entries.filter { !$0.value.applied.matches($0.value.found) }
    }

    /// After a restart of the service: nothing sent is still on its way.
    public mutating func forgetPending() {
        for id in entries.keys { entries[id]?.pending = false }
    }

    private mutating func step(_ stream: MixerStream, treatment: StreamTreatment, duckLevel: Double) -> MixerCommand? {
        let current = Level(volume: stream.volume, muted: stream.muted)
        if var entry = entries[stream.id], entry.serial != stream.serial {
            // The id belongs to a new stream now.
            entry.pending = false
            entries[stream.id] = entry
            removed(stream.id)
        }
        var entry: Entry
        if let known = entries[stream.id] {
            entry = known
            if entry.pending {
                if current.matches(entry.applied) { entry.pending = false }
            } else if !current.matches(entry.applied) {
                // Changed by someone else since: that is the stream's level now.
                if abs(current.volume - entry.applied.volume) > Self.tolerance { entry.found.volume = current.volume }
                if current.muted != entry.applied.muted { entry.found.muted = current.muted }
                entry.applied = current
            }
        } else {
            var found = current
            if let leak = leaks[stream.restoreKey], current.matches(leak.applied) {
                found = leak.found
                leaks.removeValue(forKey: stream.restoreKey)
                leakOrder.removeAll { $0 == stream.restoreKey }
            }
            entry = Entry(serial: stream.serial, restoreKey: stream.restoreKey, found: found, applied: current, pending: false)
        }

        let target: Level = switch treatment {
        case .untouched: entry.found
        case .ducked: Level(volume: entry.found.volume * duckLevel, muted: entry.found.muted)
        case .muted: Level(volume: entry.found.volume, muted: true)
        }
        let base = entry.pending ? entry.applied : current
        let volumeChange = abs(base.volume - target.volume) > Self.tolerance ? target.volume : nil
        let muteChange = base.muted != target.muted ? target.muted : nil
        guard volumeChange != nil || muteChange != nil else {
            if treatment == .untouched, !entry.pending {
                // Back at its own level, and the mixer has it: nothing of ours is left.
                entries.removeValue(forKey: stream.id)
            } else {
                entries[stream.id] = entry
            }
            return nil
        }
        entry.applied = target
        entry.pending = true
        entries[stream.id] = entry
        return MixerCommand(stream: stream.id, volume: volumeChange, muted: muteChange)
    }
}
