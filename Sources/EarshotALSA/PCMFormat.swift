import CALSA

/// The shape of interleaved PCM samples: rate, channel count and sample width.
public struct PCMFormat: Sendable, Equatable {
    /// Frames per second, in Hz.
    public var sampleRate: UInt32
    /// Interleaved channels per frame.
    public var channels: UInt32
    /// 8 means unsigned 8-bit samples (`SND_PCM_FORMAT_U8`), 16 means signed 16-bit
    /// little-endian samples (`SND_PCM_FORMAT_S16_LE`). No other width is supported.
    public var bitsPerSample: UInt32

    public init(sampleRate: UInt32, channels: UInt32, bitsPerSample: UInt32) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitsPerSample = bitsPerSample
    }

    /// Bytes of one interleaved frame: `channels * bitsPerSample / 8`.
    public var bytesPerFrame: Int {
        Int(channels) * Int(bitsPerSample / 8)
    }

    /// The byte that repeated makes silence: 0x80 for unsigned 8-bit samples, 0 for signed
    /// 16-bit ones.
    var silenceByte: UInt8 {
        bitsPerSample == 8 ? 0x80 : 0
    }

    /// The sample widths EarshotALSA can open, ascending.
    public static let supportedBitsPerSample: [UInt32] = [8, 16]

    /// The ALSA sample format for `bits`, or nil for a width EarshotALSA does not handle.
    static func sampleFormat(bits: UInt32) -> snd_pcm_format_t? {
        switch bits {
        case 8: SND_PCM_FORMAT_U8
        case 16: SND_PCM_FORMAT_S16_LE
        default: nil
        }
    }

    /// "U8" / "S16_LE" for the widths EarshotALSA handles, else "N-bit".
    static func formatName(bits: UInt32) -> String {
        switch bits {
        case 8: "U8"
        case 16: "S16_LE"
        default: "\(bits)-bit"
        }
    }
}

/// What a capture device accepts exactly, among the candidates Earshot uses.
public struct CaptureCapabilities: Sendable, Equatable {
    /// Which of `CaptureDevice.candidateSampleRates` the device accepts exactly, ascending.
    public var sampleRates: [UInt32]
    /// Which of 8 (U8) and 16 (S16_LE) the device accepts, ascending.
    public var bitsPerSample: [UInt32]
    /// The channel counts the device accepts.
    public var channels: ClosedRange<UInt32>

    public init(sampleRates: [UInt32], bitsPerSample: [UInt32], channels: ClosedRange<UInt32>) {
        self.sampleRates = sampleRates
        self.bitsPerSample = bitsPerSample
        self.channels = channels
    }
}

/// How fast a `CaptureStream` delivers.
public enum CapturePacing: String, Sendable, CaseIterable {
    /// Trust the device's own timing. Sound cards deliver in real time; `file` and `null`
    /// PCMs deliver as fast as they are read.
    case device
    /// Never deliver faster than real time: before each read the reading thread sleeps until
    /// ((frames delivered + one period) / rate) has elapsed on `CLOCK_MONOTONIC` since
    /// reading started, so a period arrives once it has been "heard", as from a live
    /// microphone. Meant for non-real-time PCMs (`file`, `null`).
    case realtime
}
