import CaptureCore
import EarshotALSA
import EarshotDBus
import EarshotSpeechProcessing
import Logging
import Synchronization

/// `EchoCancel`'s far end: what the speakers play, read from the echo reference PCM
/// (`--echo-reference`: a sink's monitor, a codec's loopback channel) on a reading thread of
/// its own, mono at the pass-thru's rate in 10 ms periods. Before each microphone read it
/// processes, the microphone's reading thread hands what has come to the canceller, placed
/// by the two streams' clock times (the reference's from its earliest read) and `holdMs`
/// later: a read of the reference may complete
/// a moment after the microphone's read of the same instant, and its samples must be there
/// when the microphone's echo of them is processed. The reference never leaves the service.
final class DeviceReference: Sendable {
    /// The reference's period.
    static let periodMs = 10
    /// How much later than read the far end goes to the canceller: two of its periods and
    /// PipeWire's default quantum (21 ms) with room to spare. Every echo comes later than
    /// this: a speaker's own buffer is longer, and the flight through the cabin adds to it.
    static let holdMs = 40
    /// The most the reference may run ahead of the microphone before its oldest samples are
    /// dropped (the microphone stopped reading for a while; the canceller's delay
    /// measurement then finds the far end's new place).
    static let mostPendingSeconds = 2

    private struct State {
        var pending: [Float] = []
        /// When the reference's first sample was taken (CLOCK_MONOTONIC µs): the earliest
        /// any read says, its time less the frames read up to it (a read that returns late,
        /// or several that return at once, say later).
        var startedUs: UInt64?
        var framesRead = 0
        var firstRead: (us: UInt64, frames: Int)?
        var placement = FarEndPlacement(laterBy: 0)
    }

    private let state: Mutex<State>
    private let stream: CaptureStream
    let device: String
    let rate: Int
    let passThru: UInt64

    /// Opens `device` for the pass-thru `passThru` at `rate` (not reading yet).
    init(device: String, rate: Int, passThru: UInt64, pacing: CapturePacing) throws(DBusError) {
        self.device = device
        self.rate = rate
        self.passThru = passThru
        state = Mutex(State(placement: FarEndPlacement(laterBy: Self.holdMs * rate / 1000)))
        do {
            stream = try CaptureStream(device: device, format: PCMFormat(sampleRate: UInt32(rate), channels: 1, bitsPerSample: 16),
                                       periodFrames: UInt32(rate * Self.periodMs / 1000), pacing: pacing)
        } catch {
            switch error {
            case .unsupported(_, let message): throw .earshot(.unsupportedResource, "the echo reference \(device): \(message)")
            default: throw .earshot(.genericError, "the echo reference \(device): \(error.description)")
            }
        }
    }

    /// Starts reading; call just before the microphone starts.
    func start(logger: Logger) {
        let rate = self.rate, passThru = self.passThru, device = self.device
        stream.start(timestamps: .everyRead, onData: { [self] bytes, frames, us in
            let samples = PCMSamples.floats(bytes, bitsPerSample: 16)
            state.withLock { s in
                s.framesRead += frames
                let said = us - min(us, UInt64(s.framesRead) * 1_000_000 / UInt64(rate))
                if !s.placement.placed { s.startedUs = min(s.startedUs ?? said, said) }
                s.pending += samples
                let most = Self.mostPendingSeconds * rate
                if s.pending.count > most, s.placement.placed { s.pending.removeFirst(s.pending.count - most) }
            }
        }, onEnd: { error in
            if let error {
                logger.warning("pass-thru \(passThru): the echo reference \(device) failed, echo is cancelled without it from here: \(error)")
            }
        })
    }

    /// The microphone's first read came back at `us` with `frames` frames; later reads are
    /// not kept.
    func read(atUs us: UInt64, frames: Int) {
        state.withLock { s in
            if s.firstRead == nil, us > 0 { s.firstRead = (us, frames) }
        }
    }

    /// On the microphone's reading thread, with the processor held: hands the canceller what
    /// the reference has read since.
    func feed(_ processor: SpeechProcessor, logger: Logger) {
        let handed = state.withLock { s -> (samples: [Float], startedAt: Int?)? in
            guard let startedUs = s.startedUs, let first = s.firstRead else { return nil }
            return s.placement.place(&s.pending, startedUs: startedUs, firstReadUs: first.us, firstReadFrames: first.frames, rate: rate)
        }
        guard let handed else { return }
        processor.play(handed.samples, startedAt: handed.startedAt)
        if let start = handed.startedAt {
            logger.info("pass-thru \(passThru): the echo reference \(device) goes to the canceller from the microphone's sample \(start), \(Self.holdMs) ms after it was read")
        }
    }

    /// Stops reading and closes the device.
    func stop() {
        stream.stop()
    }
}
