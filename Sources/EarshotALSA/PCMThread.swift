import CALSA
import EarshotSync
import Glibc
import Synchronization

/// An open PCM served by one dedicated thread: the thread's start and end, stop requests,
/// and a wake-up pipe polled together with the PCM so that every wait ends promptly.
/// `CaptureLoop` and `PlaybackLoop` run their loops on it.
///
/// The owner keeps its own shared state under `lock` too, so that it changes atomically
/// with the stop request (e.g. a playback queue cleared by `stop`).
final class PCMThread<Direction: ALSADirection>: @unchecked Sendable {
    // @unchecked Sendable: `pcm` is used by the opening thread until `start` (which hands it
    // to the thread under `lock`), then only by that thread, which closes it; if the thread
    // never started, `stop` or deinit closes it. The wake-up descriptors are plain integers,
    // closed in deinit. `phase`, `stopRequested` and `thread` are guarded by `lock`.
    typealias Failure = ALSAStreamError<Direction>

    let device: String
    let pcm: OpaquePointer
    let lock = ThreadLock()
    private let wakeRead: Int32
    private let wakeWrite: Int32

    private enum Phase {
        /// Opened and configured, not started.
        case ready
        /// The thread owns the PCM.
        case running
        /// The PCM is closed (and `onEnd` was called, if the thread was started).
        case finished
    }

    private var phase = Phase.ready
    private var stopRequested = false
    private var thread: pthread_t?
    /// Set by the first wake-up (a stop or another request), never cleared: until then a
    /// loop learns that nothing was asked of it without taking `lock`.
    private let woken = Atomic<Bool>(false)

    /// Takes over `pcm` (closed with the thread, or in deinit if never started).
    init(pcm: OpaquePointer, device: String) throws(Failure) {
        let wake = try PCMSetup<Direction>.wakePipe(device: device)
        self.pcm = pcm
        self.device = device
        wakeRead = wake.read
        wakeWrite = wake.write
    }

    deinit {
        // Only reached once neither the owner nor the thread holds this, so the PCM is
        // closed already unless the thread was never started nor stopped.
        if phase != .finished { snd_pcm_close(pcm) }
        close(wakeRead)
        close(wakeWrite)
    }

    // MARK: - Control (any thread)

    /// Whether `stop()` was requested. Call with `lock` held.
    var stopRequestedLocked: Bool { stopRequested }
    /// Whether the PCM is closed. Call with `lock` held.
    var finishedLocked: Bool { phase == .finished }
    var isStopRequested: Bool { lock.withLock { stopRequested } }

    /// Starts the thread running `body`; when `body` returns (nil after a stop, or the error
    /// that ended it), the thread closes the PCM and calls `onEnd` with what it returned.
    /// A second call is ignored; after `stop()`, `onEnd(nil)` is called at once.
    func start(_ body: @escaping @Sendable () -> Failure?, onEnd: @escaping @Sendable (Failure?) -> Void) {
        let work: @Sendable () -> Void = { [self] in run(body, onEnd: onEnd) }
        let outcome: StartOutcome = lock.withLock {
            switch phase {
            case .running: return .ignored
            case .finished: return .endedAlready
            case .ready: break
            }
            switch Threads.detached(name: "earshot-\(Direction.noun)", work) {
            case .failure(let error):
                snd_pcm_close(pcm)
                phase = .finished
                return .failed(error.code)
            case .success(let created):
                thread = created
            }
            phase = .running
            return .started
        }
        switch outcome {
        case .started, .ignored: break
        case .endedAlready: onEnd(nil)
        case .failed(let code):
            onEnd(.io(device: device, code: -code, message: "cannot start the \(Direction.noun) thread: " + alsaMessage(-code)))
        }
    }

    /// The thread's life: the body, then the PCM closed, `onEnd`, and the phase finished.
    private func run(_ body: @Sendable () -> Failure?, onEnd: @Sendable (Failure?) -> Void) {
        let error = body()
        snd_pcm_close(pcm)
        onEnd(error)
        lock.withLock {
            phase = .finished
            lock.broadcastLocked()
        }
    }


    /// Requests a stop (running `locked` under the lock with it), wakes the thread and
    /// returns once it has closed the PCM and called `onEnd`; from the thread itself it only
    /// requests. Idempotent.
    func stop(_ locked: () -> Void = {}) {
        lock.withLock {
            stopRequested = true
            locked()
            switch phase {
            case .finished:
                return
            case .ready:
                snd_pcm_close(pcm)
                phase = .finished
            case .running:
                wakeLocked()
                if let thread, pthread_equal(thread, pthread_self()) != 0 { return }
                lock.waitLocked { phase == .finished }
            }
        }
    }

    /// Whether anything may have been asked of the thread (a stop or another request made
    /// under `lock`); false means nothing was, and `lock` need not be taken to find out.
    var mayHaveRequests: Bool { woken.load(ordering: .acquiring) }

    /// Wakes the thread out of any wait. Call with `lock` held.
    func wakeLocked() {
        woken.store(true, ordering: .releasing)
        var byte: UInt8 = 1
        // A full pipe already holds a wake-up, so a failed write loses nothing.
        _ = write(wakeWrite, &byte, 1)
    }

    // MARK: - On the thread

    /// What one `poll` of the PCM and the wake-up pipe came to.
    enum PollResult {
        /// The PCM is ready: its translated `revents`.
        case ready(UInt16)
        /// Woken, interrupted, or timed out with the device still there: go round again.
        case again
        /// A libasound call failed with this negative code: recover or end.
        case failed(Int32)
        /// The device is disconnected or `poll` itself failed.
        case ended(Failure)
    }

    /// Polls the PCM's descriptors (fetched each time: they may change across a recovery)
    /// after the wake-up pipe. `scratch` keeps the descriptor array between calls.
    func poll(_ scratch: inout [pollfd], timeoutMilliseconds: Int32) -> PollResult {
        let count = snd_pcm_poll_descriptors_count(pcm)
        if count < 0 { return .failed(count) }
        if scratch.count != Int(count) + 1 {
            scratch = [pollfd](repeating: pollfd(), count: Int(count) + 1)
        }
        scratch[0] = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
        let filled = scratch.withUnsafeMutableBufferPointer { descriptors in
            snd_pcm_poll_descriptors(pcm, descriptors.baseAddress! + 1, UInt32(count))
        }
        if filled < 0 { return .failed(filled) }
        let ready = Glibc.poll(&scratch, nfds_t(filled + 1), timeoutMilliseconds)
        if ready < 0 {
            let code = errno
            if code == EINTR { return .again }
            return .ended(.io(device: device, code: -code, message: "poll failed: " + alsaMessage(-code)))
        }
        if scratch[0].revents != 0 {
            drainWake()
            return .again
        }
        if ready == 0 {
            if snd_pcm_state(pcm) == SND_PCM_STATE_DISCONNECTED {
                return .ended(.deviceGone(device: device, message: "the device is disconnected"))
            }
            return .again
        }
        var events: UInt16 = 0
        let translated = scratch.withUnsafeMutableBufferPointer { descriptors in
            snd_pcm_poll_descriptors_revents(pcm, descriptors.baseAddress! + 1, UInt32(filled), &events)
        }
        if translated < 0 { return .failed(translated) }
        return .ready(events)
    }

    /// Sleeps until `deadline` (CLOCK_MONOTONIC ns) or a wake-up; returns whether woken.
    func waitUntilWoken(deadline: UInt64) -> Bool {
        while true {
            let now = monotonicNanoseconds()
            if now >= deadline { return false }
            let milliseconds = Int32(clamping: (deadline - now + 999_999) / 1_000_000)
            var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            if Glibc.poll(&descriptor, 1, milliseconds) > 0 {
                drainWake()
                return true
            }
        }
    }

    /// Sleeps until `deadline` unless `stop()` is requested first; returns whether it was.
    func waitUntilStopped(deadline: UInt64) -> Bool {
        while true {
            if isStopRequested { return true }
            if !waitUntilWoken(deadline: deadline) { return isStopRequested }
        }
    }

    private func drainWake() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &bytes, bytes.count) > 0 {}
    }

    /// An error for a failed recovery step: `.deviceGone` when the code says the device went
    /// away, else `.io`.
    func failure(_ code: Int32, what: String) -> Failure {
        let message = what + ": " + alsaMessage(code)
        switch classify(errorCode: code, state: snd_pcm_state(pcm)) {
        case .deviceGone, .prepareOrGone: return .deviceGone(device: device, message: message)
        default: return .io(device: device, code: code, message: message)
        }
    }
}

/// What `PCMThread.start` found under its lock.
private enum StartOutcome {
    case started, ignored, endedAlready
    /// `pthread_create` failed with this errno value.
    case failed(Int32)
}
