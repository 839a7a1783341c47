import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc

/// A recorder (`arecord … -t raw`) writing into a pipe that a dedicated thread of this
/// process drains at exactly `bytesPerSecond`, paced against CLOCK_MONOTONIC, so the recorder
/// is held back by the pipe the way a live microphone would hold it back.
///
/// The thread that spawns the recorder also drains and reaps it and lives until the recorder
/// has ended, so the recorder's `setpriv --pdeathsig KILL` fires only if this process dies.
final class PacedRecorder: Sendable {
    struct Statistics: Sendable, Encodable {
        /// Bytes taken from the pipe.
        var bytesRead: UInt64 = 0
        /// Seconds from the first byte to the last read.
        var seconds: Double = 0
        /// Pacing ticks whose bytes were not all in the pipe yet: reading them waited more
        /// than one tick for the recorder.
        var lateTicks = 0
        var ticks = 0
        /// Whether the pipe reached end of file before `stop()` (the recorder ended by itself).
        var endedEarly = false
        var exitStatus: Int32?
    }

    private struct State {
        var pid: pid_t = 0
        var reaped = false
        var stopRequested = false
        var done = false
        var failure: String?
        var statistics = Statistics()
    }

    let arguments: [String]
    let environment: [String: String]
    let logPath: String
    let bytesPerSecond: UInt64
    let frameBytes: UInt64
    /// Pacing step: every tick the reader takes what is due by then.
    static let tickNanoseconds: UInt64 = 10_000_000
    private let state = Locked(State())

    /// Where the ticks fall (nil: a tick's length after the first frame, and so on).
    let tickPhase: WakePhase?

    init(arguments: [String], environment: [String: String], logPath: String, bytesPerSecond: UInt64, frameBytes: UInt64,
         tickPhase: WakePhase? = nil) {
        self.arguments = arguments
        self.environment = environment
        self.logPath = logPath
        self.bytesPerSecond = bytesPerSecond
        self.frameBytes = frameBytes
        self.tickPhase = tickPhase
    }

    var pid: pid_t { state.withLock { $0.pid } }
    var statistics: Statistics { state.withLock { $0.statistics } }
    var isRunning: Bool { state.withLock { $0.pid > 0 && !$0.reaped } }

    /// Starts the thread, which spawns the recorder; returns once it is spawned.
    func start() async throws -> pid_t {
        let thread = Thread { [self] in threadMain() }
        thread.name = "earshot-bench-paced-reader"
        thread.start()
        while true {
            let (pid, failure) = state.withLock { ($0.pid, $0.failure) }
            if let failure { throw BenchmarkError(failure) }
            if pid > 0 { return pid }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Waits until `bytes` have been read (the recorder runs and is being paced).
    func waitForData(_ bytes: UInt64, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (read, done, failure) = state.withLock { ($0.statistics.bytesRead, $0.done, $0.failure) }
            if let failure { throw BenchmarkError(failure) }
            if read >= bytes { return }
            if done || ContinuousClock.now >= deadline {
                throw BenchmarkError("\(arguments.first ?? "the recorder") delivered \(read) bytes, not \(bytes), within \(timeout)"
                                     + (done ? " and ended" : "") + "; its log: " + logText)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    var logText: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Stops the recorder (SIGTERM; the reading thread escalates to SIGKILL after 3 s)
    /// and waits for the thread to reap it. Idempotent.
    func stop() async {
        state.withLock { s in
            s.stopRequested = true
            if s.pid > 0 && !s.reaped { kill(s.pid, SIGTERM) }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while !state.withLock({ $0.done || $0.pid == 0 && $0.failure != nil }) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    // MARK: The reading thread

    private func threadMain() {
        // pipe2 is not visible from Swift; nothing else is spawned while this runs, so
        // setting close-on-exec right after is enough to keep both ends out of other children.
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            state.withLock { $0.failure = "pipe: \(String(cString: strerror(errno)))"; $0.done = true }
            return
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let (reader, writer) = (ends[0], ends[1])
        let spawned = spawn(stdout: writer)
        close(writer)
        switch spawned {
        case .failure(let error):
            close(reader)
            state.withLock { $0.failure = error.description; $0.done = true }
            return
        case .success(let pid):
            state.withLock { $0.pid = pid }
        }
        drain(reader)
        close(reader)  // a recorder still writing now gets EPIPE / SIGPIPE
        reap()
        state.withLock { $0.done = true }
    }

    /// Spawns the recorder (as the test harness does: empty signal mask, default
    /// dispositions, dies with this process), stdout into the pipe, stderr to the log.
    private func spawn(stdout writer: Int32) -> Result<pid_t, BenchmarkError> {
        do {
            return .success(try ChildProcess.spawn(arguments, environment: environment, stdout: writer, logPath: logPath))
        } catch {
            return .failure(BenchmarkError("\(error)"))
        }
    }

    /// Reads the pipe: first one frame (the recorder has started), then at every tick
    /// exactly what is due since that first frame at `bytesPerSecond`.
    private func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        /// Reads until `count` bytes are consumed; false at end of file or on an error.
        func take(_ count: UInt64) -> Bool {
            var left = count
            while left > 0 {
                let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, Int(min(left, UInt64($0.count)))) }
                if n > 0 {
                    left -= UInt64(n)
                    state.withLock { $0.statistics.bytesRead += UInt64(n) }
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }

        guard take(frameBytes) else {
            state.withLock { $0.statistics.endedEarly = !$0.stopRequested }
            return
        }
        let start = monotonicNanoseconds()
        let tickNanoseconds = Self.tickNanoseconds
        let firstTick = tickPhase?.next(atOrAfter: start + tickNanoseconds, period: tickNanoseconds) ?? start + tickNanoseconds
        var consumed = frameBytes
        var tick: UInt64 = 0
        while !state.withLock({ $0.stopRequested }) {
            let deadline = firstTick + tick * tickNanoseconds
            tick += 1
            Self.sleep(until: deadline)
            let due = (deadline - start) * bytesPerSecond / 1_000_000_000 / frameBytes * frameBytes
            let reading = monotonicNanoseconds()
            if due > consumed {
                guard take(due - consumed) else {
                    state.withLock { $0.statistics.endedEarly = !$0.stopRequested }
                    break
                }
                consumed = due
            }
            let late = monotonicNanoseconds() - reading > tickNanoseconds
            state.withLock { s in
                s.statistics.ticks += 1
                if late { s.statistics.lateTicks += 1 }
                s.statistics.seconds = Double(monotonicNanoseconds() - start) / 1e9
            }
        }
    }

    /// Sleeps until `deadline` on CLOCK_MONOTONIC (ns), through interruptions.
    static func sleep(until deadline: UInt64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
    }

    /// Waits up to 3 s for the recorder to end, then kills it; reaps it. Every kill and
    /// reap happens under the lock, so a reaped pid is never signalled.
    private func reap() {
        func tryReap() -> Bool {
            state.withLock { s in
                guard !s.reaped else { return true }
                var raw: Int32 = 0
                guard waitpid(s.pid, &raw, WNOHANG) == s.pid else { return false }
                s.reaped = true
                s.statistics.exitStatus = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
                return true
            }
        }
        for _ in 0..<300 {
            if tryReap() { return }
            usleep(10_000)
        }
        state.withLock { s in if !s.reaped { kill(s.pid, SIGKILL) } }
        while !tryReap() { usleep(10_000) }
    }
}
