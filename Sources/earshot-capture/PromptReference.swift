import CaptureCore
import EarshotDBus
import EarshotSpeechProcessing
import EarshotSync
import EarshotVoice
import Glibc
import Logging
import Synchronization

/// A `BargeIn` prompt's played audio on its way to the echo canceller. The alert service
/// writes what it plays of the prompt, frame for frame, to a pipe (`PlayedAudio`). A reader
/// of its own (on `readers`) takes it as it comes and brings it to the pass-thru's rate;
/// before each read it processes, the microphone's reading thread hands what is ready to
/// the canceller, from the microphone's sample taken when the first frame went out (the
/// speech's `StartedAtMonotonicUs`, placed against the first read). The reading, parsing
/// and resampling stay off the microphone's thread: there they held up its chunks (the
/// first read of each pass-thru by 5.6-10.6 ms, every other by about 1.2 ms).
final class PromptReference: Sendable {
    private struct State {
        /// Samples at the pass-thru's rate not yet given to the canceller.
        var pending: [Float] = []
        var startedUs: UInt64?
        var firstRead: (us: UInt64, frames: Int)?
        var placement = FarEndPlacement()
        /// Why the stream stopped being usable, until `feed` has said so.
        var failure: String?
        /// The pass-thru has ended: the reader stops.
        var closed = false
    }

    private let state = Mutex(State())
    let rate: Int
    let passThru: UInt64
    /// Where the prompts' streams are read: a job for each, for as long as it is written.
    private static let readers = BlockingQueue(label: "earshot-capture.prompt-reference", concurrent: true)
    /// How long the reader waits for the pipe before it looks whether the pass-thru ended.
    private static let pollMs: Int32 = 50
    /// How far the reader runs ahead of what the canceller has been given, in seconds: the
    /// alert service writes a prompt ahead of its playing (up to about four seconds and a
    /// sentence), and resampling all of it at once competed with the microphone's thread
    /// for the processors (its p99 rose from about 7 to 10 ms).
    private static let aheadSeconds = 0.5
    /// The most one feed hands over, in the microphone's reads: a read's worth keeps pace,
    /// the second catches up with the far end that started before the microphone's first.
    private static let readsPerFeed = 2

    private init(rate: Int, passThru: UInt64) {
        self.rate = rate
        self.passThru = passThru
    }

    /// A pipe for pass-thru `passThru` at `rate`, read from now on: this reference, and the
    /// writing end to hand to the alert service.
    static func make(rate: Int, passThru: UInt64) throws(DBusError) -> (PromptReference, UnixFD) {
        var ends: [Int32] = [-1, -1]
        guard Glibc.pipe(&ends) == 0 else { throw .failed("pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        let reference = PromptReference(rate: rate, passThru: passThru)
        let fd = ends[0]
        readers.enqueue { reference.read(fd) }
        return (reference, UnixFD(taking: ends[1]))
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

    /// On the microphone's reading thread, with the processor held: gives the canceller what
    /// is ready and can be placed.
    func feed(_ processor: SpeechProcessor, logger: Logger) {
        typealias Handed = (samples: [Float], startedAt: Int?)
        let rate = self.rate
        let (handed, failure, first) = state.withLock { s -> (Handed?, String?, (us: UInt64, frames: Int)?) in
            let failure = s.failure
            s.failure = nil
            guard let startedUs = s.startedUs, let first = s.firstRead else { return (nil, failure, nil) }
            let handed = s.placement.place(&s.pending, startedUs: startedUs, firstReadUs: first.us, firstReadFrames: first.frames,
                                           rate: rate, atMost: Self.readsPerFeed * first.frames)
            return (handed, failure, first)
        }
        if let failure {
            logger.warning("pass-thru \(passThru): the prompt's played audio is unusable, echo is cancelled without the rest of it: \(failure)")
        }
        guard let handed else { return }
        processor.play(handed.samples, startedAt: handed.startedAt)
        if let start = handed.startedAt, let first {
            logger.info("pass-thru \(passThru): the prompt's played audio goes to the canceller from the microphone's sample \(start) (its first read: \(first.frames) frames)")
        }
    }

    /// The pass-thru ended: the reader stops (and closes the pipe, whose writes fail from
    /// then on) within `pollMs`.
    func close() {
        state.withLock { $0.closed = true }
    }

    /// The reader: takes what the pipe holds as it comes, at the pass-thru's rate, until its
    /// end, an unusable stream, or the pass-thru's end.
    private func read(_ fd: Int32) {
        defer { _ = Glibc.close(fd) }
        var stream = PlayedReference()
        var resampler: StreamingResampler?
        var buffer = [UInt8](repeating: 0, count: 1 << 14)
        let ahead = Int(Self.aheadSeconds * Double(rate))
        while true {
            let (closed, waiting) = state.withLock { ($0.closed, $0.pending.count) }
            if closed { return }
            if waiting >= ahead {
                usleep(UInt32(Self.pollMs) * 1000)
                continue
            }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Self.pollMs)
            if polled == 0 || (polled < 0 && errno == EINTR) { continue }
            let n = polled < 0 ? -1 : buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            guard n >= 0 else {
                let reason = String(cString: strerror(errno))
                state.withLock { $0.failure = "reading it: \(reason)" }
                return
            }
            do {
                let samples = try stream.take(Array(buffer[0 ..< n]))
                if resampler == nil, let format = stream.format {
                    resampler = try StreamingResampler(from: format.sampleRate, to: rate, quality: .fastest)
                }
                if let resampler {
                    let resampled = try resampler.process(samples, last: n == 0)
                    state.withLock { $0.pending += resampled }
                }
            } catch {
                state.withLock { $0.failure = "\(error)" }
                return
            }
            if n == 0 { return }
        }
    }
}
