/// A change to send to the mixer: a stream's software levels (one per channel) and mute.
public struct MixerCommand: Sendable, Equatable {
    public let stream: UInt32
    public let volumes: [Double]
    public let muted: Bool

    public init(stream: UInt32, volumes: [Double], muted: Bool) {
        self.stream = stream
        self.volumes = volumes
        self.muted = muted
    }
}

/// Other audio is lowered and silenced in each stream's software levels (PipeWire's
/// `softVolumes` and `softMute`), which the mixer applies instead of the stream's own
/// channel levels and mute while they are set, and which WirePlumber does not store. A
/// stream's own level stays where its user and WirePlumber keep it, visible at every
/// moment, so nothing needs keeping on the side to give it back:
/// - restoring sets the software levels to the stream's own;
/// - a user who changes a lowered stream's level sets its own levels, which the mixer then
///   applies again: the next plan lowers from them;
/// - after a crash, a stream still lowered shows it (`lowered`), and is restored;
/// - the next stream WirePlumber starts under the same role or application gets that
///   key's own level, never a lowered one.
public enum SoftLevels {
    /// Gains closer than this are the same (the mixer stores 32-bit floats).
    public static let tolerance = 1e-4

    /// The software levels and mute that `treatment` asks of the stream: its own levels
    /// (untouched), scaled by `duckLevel` (ducked), or its own levels silenced (muted).
    public static func target(of stream: MixerStream, treatment: StreamTreatment, duckLevel: Double) -> (volumes: [Double], muted: Bool) {
        switch treatment {
        case .untouched: (stream.channelVolumes, stream.muted)
        case .ducked: (stream.channelVolumes.map { $0 * duckLevel }, stream.muted)
        case .muted: (stream.channelVolumes, true)
        }
    }

    /// Whether software levels of the session's are on the stream: a software mute other
    /// than its own, or software levels that are neither its own nor the never-set 1s. (A
    /// stream whose user set its levels since it was lowered may still show the old
    /// software levels, which the mixer no longer applies; restoring it is then harmless.)
    public static func lowered(_ stream: MixerStream) -> Bool {
        stream.softMuted != stream.muted
            || (!same(stream.softVolumes, stream.channelVolumes) && !same(stream.softVolumes, stream.softVolumes.map { _ in 1 }))
    }

    /// The commands that bring every stream to its treatment (`untouched` when not
    /// listed), with `duckLevel` the gain a ducked stream gets relative to its own level.
    /// An untouched stream is changed only when software levels of the session's are on it;
    /// a stream whose levels are not known yet is left until they are.
    public static func plan(streams: [MixerStream], treatments: [UInt32: StreamTreatment], duckLevel: Double) -> [MixerCommand] {
        streams.sorted { $0.id < $1.id }.compactMap { stream in
            guard !stream.channelVolumes.isEmpty else { return nil }
            let treatment = treatments[stream.id] ?? .untouched
            let wanted = target(of: stream, treatment: treatment, duckLevel: duckLevel)
            if treatment == .untouched {
                guard lowered(stream) else { return nil }
            } else if wanted.muted == stream.softMuted, same(wanted.volumes, stream.softVolumes) {
                return nil
            }
            return MixerCommand(stream: stream.id, volumes: wanted.volumes, muted: wanted.muted)
        }
    }

    static func same(_ a: [Double], _ b: [Double]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) <= tolerance }
    }
}
