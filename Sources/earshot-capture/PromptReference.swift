import CaptureCore
import EarshotDBus
import EarshotSpeechProcessing
import EarshotVoice
import Glibc
import Logging
import Synchronization

/// A `BargeIn` prompt's played audio on its way to the echo canceller. The alert service
/// writes what it plays of the prompt, frame for frame, to a pipe (`PlayedAudio`); before
/// each read it processes, the reading thread takes what has come, at the pass-thru's rate,
/// and hands it to the canceller from the microphone's sample taken when the first frame
/// went out (the speech's `StartedAtMonotonicUs`, placed against the first read).
final class PromptReference: Sendable {
    private struct State {
        var fd: Int32
        var stream = PlayedReference()
        var resampler: StreamingResampler?
        /// Samples at the pass-thru's rate not yet given to the canceller.
        var pending: [Float] = []
        var startedUs: UInt64?
        var firstRead: (us: UInt64, frames: Int)?
        var placement = FarEndPlacement()
    }

    private let state: Mutex<State>
    let rate: Int
    let passThru: UInt64

    private init(fd: Int32, rate: Int, passThru: UInt64) {
        state = Mutex(State(fd: fd))
        self.rate = rate
        self.passThru = passThru
    }

    /// A pipe for pass-thru `passThru` at `rate`: this reading end, and the writing end to
    /// hand to the alert service.
    static func make(rate: Int, passThru: UInt64) throws(DBusError) -> (PromptReference, UnixFD) {
        var ends: [Int32] = [-1, -1]
        guard Glibc.pipe(&ends) == 0 else { throw .failed("pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        return (PromptReference(fd: ends[0], rate: rate, passThru: passThru), UnixFD(taking: ends[1]))
    }

    /// The speech's first frame went out at `us` (CLOCK_MONOTONIC).
    func started(atUs us: UInt64) {
        state.withLock { $0.startedUs = $0.startedUs ?? us }
    }

    /// The microphone's first read came back at `us` with `frames` frames; later reads are
    /// not kept.
    func read(atUs us: UInt64, frames: Int) {
        state.withLock { s in
            if s.firstRead == nil, us > 0 { s.firstRead = (us, frames) }
        }
    }

    /// On the reading thread, with the processor held: takes what the pipe holds and gives
    /// the canceller what can be placed.
    func feed(_ processor: SpeechProcessor, logger: Logger) {
        state.withLock { s in
            guard s.fd >= 0 || !s.pending.isEmpty else { return }
            do {
                try take(&s, atMost: budget(s))
            } catch {
                logger.warning("pass-thru \(passThru): the prompt's played audio is unusable, echo is cancelled without it from here: \(error)")
                close(&s)
                s.pending = []
                return
            }
            guard let startedUs = s.startedUs, let first = s.firstRead,
                  let handed = s.placement.place(&s.pending, startedUs: startedUs, firstReadUs: first.us,
                                                 firstReadFrames: first.frames, rate: rate) else { return }
            processor.play(handed.samples, startedAt: handed.startedAt)
            if let start = handed.startedAt {
                logger.info("pass-thru \(passThru): the prompt's played audio goes to the canceller from the microphone's sample \(start) (its first read: \(first.frames) frames)")
            }
        }
    }

    /// What one read takes from the pipe, in bytes: two of the microphone's reads of the
    /// stream (4 KiB at least), so that the canceller's far end runs ahead of the microphone
    /// while a stream written ahead of its playing (the alert service writes each frame as
    /// it is queued for its output, up to about four seconds and a sentence ahead of the
    /// speaker) is resampled a little at each read, not all at once (10 s of prompt taken at
    /// one read held up a chunk by 70-110 ms).
    private func budget(_ s: State) -> Int {
        let readFrames = s.firstRead?.frames ?? rate / 10
        let format = s.stream.format ?? PlayedReference.Format(sampleRate: 48000, channels: 2)
        return max(4 << 10, 2 * readFrames * format.sampleRate / rate * format.channels * 2)
    }

    /// Reads at most `limit` bytes of what the pipe holds, at the pass-thru's rate.
    private func take(_ s: inout State, atMost limit: Int) throws {
        guard s.fd >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 1 << 14)
        var bytes: [UInt8] = []
        var eof = false
        while bytes.count < limit {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(s.fd, $0.baseAddress, min($0.count, limit - bytes.count)) }
            if n > 0 {
                bytes += buffer[0 ..< n]
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                eof = n == 0 || errno != EAGAIN
                break
            }
        }
        let samples = try s.stream.take(bytes)
        if s.resampler == nil, let format = s.stream.format {
            s.resampler = try StreamingResampler(from: format.sampleRate, to: rate, quality: .fastest)
        }
        if let resampler = s.resampler {
            s.pending += try resampler.process(samples, last: eof)
        }
        if eof { close(&s) }
    }

    private func close(_ s: inout State) {
        guard s.fd >= 0 else { return }
        _ = Glibc.close(s.fd)
        s.fd = -1
    }

    /// The pass-thru ended: the pipe closes (the alert service's writes fail from then on).
    func close() {
        state.withLock { close(&$0) }
    }

    deinit { close() }
}
