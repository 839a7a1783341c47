/// A playback stream as the system mixer shows it.
public struct MixerStream: Sendable, Equatable {
    public let id: UInt32
    /// Unique for the mixer's life (ids are reused); tells a stream from a later one.
    public let serial: UInt64
    public let application: String
    public let role: String
    /// The process behind the stream, 0 when unknown.
    public let pid: Int32
    public let nodeName: String
    /// `earshot.stream`, the key its program set on it ("" when none).
    public let streamKey: String
    /// The stream's own master gain and mute, as its user (or WirePlumber, restoring them)
    /// set them.
    public let volume: Double
    public let muted: Bool
    /// Its own level per channel (empty while unknown).
    public let channelVolumes: [Double]
    /// The software levels and mute the mixer applies instead of `channelVolumes` and
    /// `muted` once someone has set them (`SoftLevels`): never-set levels are 1.
    public let softVolumes: [Double]
    public let softMuted: Bool

    /// A stream with `channels` channels at `channelLevel` each; its software levels are
    /// `softVolumes` (default: never set) and `softMuted`.
    public init(id: UInt32, serial: UInt64, application: String, role: String, pid: Int32, nodeName: String, streamKey: String = "",
                volume: Double, muted: Bool, channelVolumes: [Double] = [1, 1], softVolumes: [Double]? = nil, softMuted: Bool = false) {
        self.id = id
        self.serial = serial
        self.application = application
        self.role = role
        self.pid = pid
        self.nodeName = nodeName
        self.streamKey = streamKey
        self.volume = volume
        self.muted = muted
        self.channelVolumes = channelVolumes
        self.softVolumes = softVolumes ?? channelVolumes.map { _ in 1 }
        self.softMuted = softMuted
    }
}

/// What the policy does to a stream.
public enum StreamTreatment: String, Sendable, Equatable {
    case untouched, ducked, muted
}

/// An activation as the focus policy sees it: what it does to other audio, and how its own
/// audio is recognised.
public struct FocusClaim: Sendable, Equatable {
    public enum Effect: Sendable, Equatable { case duck, mute }

    public let activation: UInt64
    public let effect: Effect
    /// Processes whose streams are the activation's own (its owner's).
    public let ownProcesses: Set<Int32>
    /// Node names, or stream keys (`earshot.stream`), whose streams are the activation's own
    /// (its `AudioStream`): how the streams of other processes, its children among them,
    /// are recognised.
    public let ownNodes: Set<String>

    public init(activation: UInt64, effect: Effect, ownProcesses: Set<Int32>, ownNodes: Set<String>) {
        self.activation = activation
        self.effect = effect
        self.ownProcesses = ownProcesses
        self.ownNodes = ownNodes
    }

    /// The claim an activation makes on other audio while it holds focus: a non-mixable
    /// one mutes it, one with `duckOthers` ducks it, a plain mixable one leaves it alone.
    /// An interrupted activation makes none.
    public static func of(activation: UInt64, configuration: CategoryConfiguration, interrupted: Bool,
                          ownProcesses: Set<Int32>, ownNodes: Set<String>) -> FocusClaim? {
        guard !interrupted else { return nil }
        let effect: Effect
        if !configuration.mixable {
            effect = .mute
        } else if configuration.ducksOthers {
            effect = .duck
        } else {
            return nil
        }
        return FocusClaim(activation: activation, effect: effect, ownProcesses: ownProcesses, ownNodes: ownNodes)
    }

    public func owns(_ stream: MixerStream) -> Bool {
        (stream.pid != 0 && ownProcesses.contains(stream.pid)) || ownNodes.contains(stream.nodeName)
            || (!stream.streamKey.isEmpty && ownNodes.contains(stream.streamKey))
    }
}

/// Audio focus on the system mixer: which playback streams are ducked or muted.
public enum FocusPolicy {
    /// A stream is muted when some claim mutes and it is not that claim's own; else ducked
    /// when some claim ducks and it is not that claim's own; a stream whose role the table
    /// exempts is never touched.
    public static func treatments(of streams: [MixerStream], claims: [FocusClaim], roles: RoleTable) -> [UInt32: StreamTreatment] {
        var result: [UInt32: StreamTreatment] = [:]
        for stream in streams {
            result[stream.id] = treatment(of: stream, claims: claims, roles: roles)
        }
        return result
    }

    public static func treatment(of stream: MixerStream, claims: [FocusClaim], roles: RoleTable) -> StreamTreatment {
        guard roles.treatment(ofRole: stream.role) == .media else { return .untouched }
        let others = claims.filter { !$0.owns(stream) }
        if others.contains(where: { $0.effect == .mute }) { return .muted }
        if others.contains(where: { $0.effect == .duck }) { return .ducked }
        return .untouched
    }
}
