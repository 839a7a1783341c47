/// Watches captured audio for `EndOnSilenceMs`: once speech has been heard, this much
/// continuous silence ends the pass-thru. Silence alone never does.
public struct SilenceTracker: Sendable {
    /// The layout of the PCM being fed.
    public struct Format: Sendable, Equatable {
        public var sampleRate: UInt32
        public var channels: UInt32
        public var bitsPerSample: UInt32

        public init(sampleRate: UInt32, channels: UInt32, bitsPerSample: UInt32) {
            self.sampleRate = sampleRate
            self.channels = channels
            self.bitsPerSample = bitsPerSample
        }

        public init(request: PassThruRequest) {
            self.init(sampleRate: request.samplingRate, channels: request.channels, bitsPerSample: request.bitsPerSample)
        }
    }

    /// Speech must last this many analysis frames (20 ms each) to count.
    public static let speechOnsetFrames = 3

    public let endAfterMs: UInt32
    public let format: Format
    private var detector: any VoiceActivityDetector
    private var pending: [Int16] = []
    private var speechRun = 0
    public private(set) var speechHeard = false
    public private(set) var silenceMs: Double = 0

    public init(endAfterMs: UInt32, format: Format, detector: any VoiceActivityDetector) {
        self.endAfterMs = endAfterMs
        self.format = format
        self.detector = detector
    }

    /// Feeds whole frames of PCM; returns true once speech has been followed by
    /// `endAfterMs` of silence.
    public mutating func feed(_ bytes: ArraySlice<UInt8>) -> Bool {
        pending += Self.mono16(bytes, format: format)
        let size = detector.frameSamples
        let frameMs = Double(size) * 1000 / Double(format.sampleRate)
        var offset = 0
        defer { pending.removeFirst(offset) }
        while pending.count - offset >= size {
            let frame = Array(pending[offset..<(offset + size)])
            offset += size
            if detector.isSpeech(frame) {
                speechRun += 1
                if speechRun >= Self.speechOnsetFrames { speechHeard = true }
                silenceMs = 0
            } else {
                speechRun = 0
                if speechHeard {
                    silenceMs += frameMs
                    if silenceMs >= Double(endAfterMs) { return true }
                }
            }
        }
        return false
    }

    /// Interleaved U8 or S16_LE PCM as mono 16-bit samples (channels averaged).
    public static func mono16(_ bytes: ArraySlice<UInt8>, format: Format) -> [Int16] {
        let channels = Int(format.channels)
        let width = Int(format.bitsPerSample / 8)
        let frames = bytes.count / (channels * width)
        var out = [Int16](repeating: 0, count: frames)
        let base = bytes.startIndex
        for frame in 0..<frames {
            var sum = 0
            for channel in 0..<channels {
                let at = base + (frame * channels + channel) * width
                if width == 1 {
                    sum += (Int(bytes[at]) - 128) << 8
                } else {
                    sum += Int(Int16(bitPattern: UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8))
                }
            }
            out[frame] = Int16(sum / channels)
        }
        return out
    }
}
