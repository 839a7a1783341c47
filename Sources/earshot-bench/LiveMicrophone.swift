import EarshotDBus
import Foundation
import Glibc

/// A test microphone that delivers audio in real time the way a live device does: an ALSA
/// `file` PCM whose `infile` is a FIFO, filled by a thread of this process one period at a
/// time at the PCM's byte rate.
///
/// A process reading the PCM blocks in the FIFO read until its next period has been
/// "heard", so it is paced by the device and wakes once per period, as it would on a sound
/// card's interrupt, instead of pacing itself with a clock of its own (whose timer wake-ups
/// it would pay for, while a recorder held back by a pipe does not). Everything measured
/// side by side then reads the same kind of device the same way. The feeding thread's own
/// wake-ups are this process's, not the reader's.
///
/// Each open of the PCM hears `content` from its beginning (the `file` plugin opens its
/// `infile` on every `snd_pcm_open`); a reader that closes is noticed at once, and the next
/// open starts afresh. Readers must ask for whole periods (`periodBytes`), as an ALSA reader
/// with that period does: a shorter FIFO read would leave the rest of their buffer unfilled.
///
/// With a `WakePhase`, periods are delivered at fixed times of a clock shared with other
/// microphones, so that processes reading different microphones wake at moments chosen
/// apart, not wherever their starts happened to fall.
final class LiveMicrophone: Sendable {
    let fifo: String
    private let content: [UInt8]
    private let periodBytes: Int
    private let periodNanoseconds: UInt64
    private let phase: WakePhase?
    private let state = Locked(State())

    private struct State {
        var stopRequested = false
        var running = false
    }

    /// Makes the FIFO at `fifo` if it does not exist yet; nothing is fed before `start()`.
    /// Without a `phase`, a reader's first period is delivered as soon as it opens the PCM.
    init(fifo: String, content: [UInt8], bytesPerSecond: Int, periodBytes: Int, phase: WakePhase? = nil) throws {
        precondition(bytesPerSecond > 0 && periodBytes > 0 && !content.isEmpty)
        var status = stat()
        if stat(fifo, &status) != 0 {
            guard mkfifo(fifo, 0o600) == 0 else { throw BenchmarkError("mkfifo \(fifo): \(String(cString: strerror(errno)))") }
        }
        self.fifo = fifo
        self.content = content
        self.periodBytes = periodBytes
        periodNanoseconds = UInt64(periodBytes) * 1_000_000_000 / UInt64(bytesPerSecond)
        self.phase = phase
    }

    /// Starts the feeding thread, which waits for a reader to open the PCM.
    func start() {
        // A reader that goes away between two periods must not end this process.
        signal(SIGPIPE, SIG_IGN)
        state.withLock { $0.running = true }
        let thread = Thread { [self] in
            feed()
            state.withLock { $0.running = false }
        }
        thread.name = "earshot-bench-live-microphone"
        thread.start()
    }

    /// Stops feeding and waits for the thread to end.
    func stop() async {
        state.withLock { $0.stopRequested = true }
        let deadline = ContinuousClock.now + .seconds(5)
        while state.withLock({ $0.running }) && ContinuousClock.now < deadline {
            // A thread waiting for a reader in open() gets one, sees the stop and leaves.
            let reader = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            try? await Task.sleep(for: .milliseconds(5))
            if reader >= 0 { close(reader) }
        }
    }

    private var stopRequested: Bool { state.withLock { $0.stopRequested } }

    private func feed() {
        while !stopRequested {
            let writer = open(fifo, O_WRONLY | O_CLOEXEC)  // waits for a reader
            if writer < 0 {
                if errno == EINTR { continue }
                return
            }
            defer { close(writer) }
            if stopRequested { return }
            feedOneReader(writer)
        }
    }

    /// Feeds `content` from its start, a period at a time, until the reader closes.
    private func feedOneReader(_ writer: Int32) {
        var offset = 0
        var due = firstDue(after: monotonicNanoseconds())
        while !stopRequested {
            guard wait(until: due, writer), writePeriod(writer, from: offset) else { return }
            offset = (offset + periodBytes) % content.count
            due += periodNanoseconds
        }
    }

    /// When the first period is due for a reader that opened at `now`: at once, or at the
    /// phase's next delivery time.
    private func firstDue(after now: UInt64) -> UInt64 {
        phase?.next(atOrAfter: now, period: periodNanoseconds) ?? now
    }

    /// Waits until `due`; false once the reader has gone (POLLERR on a FIFO's writing end
    /// once it has no reader) or a stop is requested. The reader is watched in whole
    /// milliseconds until the last one, which is slept to the nanosecond.
    private func wait(until due: UInt64, _ writer: Int32) -> Bool {
        while true {
            if stopRequested { return false }
            let now = monotonicNanoseconds()
            if now >= due { return true }
            let milliseconds = (due - now) / 1_000_000
            guard milliseconds >= 1 else {
                PacedRecorder.sleep(until: due)
                return !stopRequested
            }
            var descriptor = pollfd(fd: writer, events: 0, revents: 0)
            if poll(&descriptor, 1, Int32(clamping: milliseconds)) > 0, descriptor.revents & Int16(POLLERR | POLLHUP) != 0 { return false }
        }
    }

    /// Writes one period starting at `offset` (wrapping around `content`), straight from
    /// `content`; false once the reader has gone.
    private func writePeriod(_ writer: Int32, from offset: Int) -> Bool {
        content.withUnsafeBytes { bytes in
            var written = 0
            while written < periodBytes {
                let start = (offset + written) % bytes.count
                let n = write(writer, bytes.baseAddress! + start, min(periodBytes - written, bytes.count - start))
                if n > 0 {
                    written += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return false  // EPIPE: the reader closed
                }
            }
            return true
        }
    }
}
