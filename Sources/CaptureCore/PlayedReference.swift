/// What the alert service played of a pass-thru's prompt, read from its `PlayedAudio`
/// stream (a WAV header, then 16-bit frames to EOF), and where it belongs against the
/// microphone's samples: the echo canceller's reference, the very samples that went out.
public struct PlayedReference: Sendable {
    /// The stream's format, from its header.
    public struct Format: Sendable, Equatable {
        public var sampleRate: Int
        public var channels: Int

        public init(sampleRate: Int, channels: Int) {
            self.sampleRate = sampleRate
            self.channels = channels
        }
    }

    /// The stream is not what `PlayedAudio` promises.
    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    public private(set) var format: Format?
    /// The header's bytes until it is whole, then a byte of a frame split between reads.
    private var held: [UInt8] = []
    static let headerSize = 44

    public init() {}

    /// Takes the stream's next bytes; returns the samples they complete (mono, -1...1,
    /// channels averaged), none until the header is whole.
    public mutating func take(_ bytes: [UInt8]) throws(Malformed) -> [Float] {
        held += bytes
        if format == nil {
            guard held.count >= Self.headerSize else { return [] }
            format = try Self.format(of: Array(held[0 ..< Self.headerSize]))
            held.removeFirst(Self.headerSize)
        }
        guard let format else { return [] }
        let frameBytes = 2 * format.channels
        let whole = held.count / frameBytes * frameBytes
        var samples = [Float](repeating: 0, count: whole / frameBytes)
        for frame in 0 ..< samples.count {
            var sum: Float = 0
            for channel in 0 ..< format.channels {
                let at = frame * frameBytes + 2 * channel
                sum += Float(Int16(bitPattern: UInt16(held[at]) | UInt16(held[at + 1]) << 8))
            }
            samples[frame] = sum / Float(format.channels) / 32768
        }
        held.removeFirst(whole)
        return samples
    }

    /// A 44-byte canonical header of 16-bit PCM.
    static func format(of header: [UInt8]) throws(Malformed) -> Format {
        func text(_ at: Int) -> String { String(decoding: header[at ..< at + 4], as: UTF8.self) }
        func u16(_ at: Int) -> Int { Int(header[at]) | Int(header[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        guard text(0) == "RIFF", text(8) == "WAVE", text(12) == "fmt ", text(36) == "data" else {
            throw Malformed(description: "not a WAV stream")
        }
        guard u16(20) == 1, u16(34) == 16 else { throw Malformed(description: "not 16-bit PCM") }
        let channels = u16(22), rate = u32(24)
        guard (1 ... 8).contains(channels), (8000 ... 192_000).contains(rate) else {
            throw Malformed(description: "\(channels) channel(s) at \(rate) Hz")
        }
        return Format(sampleRate: rate, channels: channels)
    }

    /// The microphone's sample (at `rate`) taken when the stream's first frame went out at
    /// `startedUs`, from the first read: returned at `firstReadUs` with `firstReadFrames`
    /// frames. The read's frames were taken before it returned, so this is the latest the
    /// frame can be, never later than the echo: the canceller measures the delay after it.
    /// Negative when the frame went out before the microphone's first sample.
    public static func startSample(startedUs: UInt64, firstReadUs: UInt64, firstReadFrames: Int, rate: Int) -> Int {
        let offsetUs = Int64(bitPattern: startedUs &- firstReadUs)
        return firstReadFrames + Int(offsetUs * Int64(rate) / 1_000_000)
    }
}
