/// What analysing a whole audio file found.
public struct AudioAnalysis: Sendable, Equatable {
    /// The source's container: `.wave`, `.oggVorbis` or `.flac` (never `.aacM4A`).
    public let format: MediaFormat
    public let sampleRate: UInt32
    public let channels: UInt32
    /// Frames actually decoded.
    public let frames: UInt64
    /// EBU R128 integrated loudness in LUFS; -infinity for silence (or audio shorter than
    /// one 400 ms gating block).
    public let loudnessLufs: Double
    /// The highest true peak over the channels in dBTP; -infinity for silence.
    public let truePeakDbtp: Double

    public init(format: MediaFormat, sampleRate: UInt32, channels: UInt32, frames: UInt64,
                loudnessLufs: Double, truePeakDbtp: Double) {
        self.format = format
        self.sampleRate = sampleRate
        self.channels = channels
        self.frames = frames
        self.loudnessLufs = loudnessLufs
        self.truePeakDbtp = truePeakDbtp
    }

    /// `frames * 1_000_000 / sampleRate`, rounded down, computed without overflow.
    public var durationMicroseconds: UInt64 {
        guard sampleRate > 0 else { return 0 }
        let rate = UInt64(sampleRate)
        return frames / rate * 1_000_000 + frames % rate * 1_000_000 / rate
    }
}
