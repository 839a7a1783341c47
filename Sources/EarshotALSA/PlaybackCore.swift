import CALSA
import EarshotSync
import Glibc
import Synchronization

/// The state a `PlaybackStream` shares with its writing thread.
final class PlaybackCore: @unchecked Sendable {
    // @unchecked Sendable: `pcm` is used by the opening thread until `start` (which hands it
    // to the writing thread under `lock`), then only by the writing thread, which closes it;
    // if the stream never started, `stop` closes it under `lock`. The wake-up descriptors
    // are plain integers, closed in deinit. Everything else mutable is guarded by `lock` or
    // atomic.
    let device: String
    let format: PCMFormat
    let periodFrames: Int
    let bufferFrames: Int
    let pacing: PlaybackPacing
    private let pcm: OpaquePointer
    private let wakeRead: Int32
    private let wakeWrite: Int32

    let recoveries = Atomic<Int>(0)
    let framesWritten = Atomic<UInt64>(0)

    private enum Phase {
        /// Opened and configured, not started.
        case ready
        /// The writing thread owns the PCM.
        case running
        /// The PCM is closed (and `onEnd` was called, if the stream was started).
        case finished
    }

    private let lock = ThreadLock()
    // Guarded by `lock`:
    private var phase = Phase.ready
    private var stopRequested = false
    private var finishRequested = false
    private var queue: [[Int16]] = []
    private var queueHead = 0
    private var writerThread: pthread_t?

    init(pcm: OpaquePointer, device: String, format: PCMFormat, periodFrames: Int, bufferFrames: Int,
         pacing: PlaybackPacing, wakeRead: Int32, wakeWrite: Int32) {
        self.pcm = pcm
        self.device = device
        self.format = format
        self.periodFrames = max(1, periodFrames)
        self.bufferFrames = max(1, bufferFrames)
        self.pacing = pacing
        self.wakeRead = wakeRead
        self.wakeWrite = wakeWrite
    }

    deinit {
        if phase != .finished { snd_pcm_close(pcm) }
        close(wakeRead)
        close(wakeWrite)
    }

    // MARK: - Control (any thread)

    func enqueue(_ samples: [Int16]) -> Bool {
        var segment = samples
        let channels = Int(format.channels)
        if segment.count % channels != 0 {
            segment += [Int16](repeating: 0, count: channels - segment.count % channels)
        }
        #if _endian(big)
        segment = segment.map(\.littleEndian)
        #endif
        return lock.withLock {
            guard !finishRequested, !stopRequested, phase != .finished else { return false }
            if !segment.isEmpty {
                queue.append(segment)
                wake()
            }
            return true
        }
    }

    func finish() {
        lock.withLock {
            finishRequested = true
            if phase == .running { wake() }
        }
    }

    func start(onFirstFrame: @escaping @Sendable (UInt64) -> Void,
               onEnd: @escaping @Sendable (PlaybackError?) -> Void) {
        enum Outcome { case started, ignored, endedAlready, failed(PlaybackError) }
        let outcome: Outcome = lock.withLock {
            switch phase {
            case .running: return .ignored
            case .finished: return .endedAlready
            case .ready: break
            }
            let context = Unmanaged.passRetained(WriterContext(core: self, onFirstFrame: onFirstFrame, onEnd: onEnd))
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
            defer { pthread_attr_destroy(&attributes) }
            var thread = pthread_t()
            let result = pthread_create(&thread, &attributes, { argument in
                let context = Unmanaged<WriterContext>.fromOpaque(argument!).takeRetainedValue()
                context.core.runWriter(onFirstFrame: context.onFirstFrame, onEnd: context.onEnd)
                return nil
            }, context.toOpaque())
            guard result == 0 else {
                context.release()
                snd_pcm_close(pcm)
                phase = .finished
                return .failed(.io(device: device, code: -result,
                                   message: "cannot start the writing thread: " + alsaMessage(-result)))
            }
            writerThread = thread
            phase = .running
            return .started
        }
        switch outcome {
        case .started, .ignored: break
        case .endedAlready: onEnd(nil)
        case .failed(let error): onEnd(error)
        }
    }

    func stop() {
        lock.withLock {
            stopRequested = true
            queue = []
            queueHead = 0
            switch phase {
            case .finished:
                return
            case .ready:
                snd_pcm_close(pcm)
                phase = .finished
            case .running:
                wake()
                if let writerThread, pthread_equal(writerThread, pthread_self()) != 0 { return }
                lock.waitLocked { phase == .finished }
            }
        }
    }

    /// Call with `lock` held.
    private func wake() {
        var byte: UInt8 = 1
        // A full pipe already holds a wake-up, so a failed write loses nothing.
        _ = write(wakeWrite, &byte, 1)
    }

    // MARK: - Writing thread

    private final class WriterContext {
        let core: PlaybackCore
        let onFirstFrame: @Sendable (UInt64) -> Void
        let onEnd: @Sendable (PlaybackError?) -> Void
        init(core: PlaybackCore, onFirstFrame: @escaping @Sendable (UInt64) -> Void,
             onEnd: @escaping @Sendable (PlaybackError?) -> Void) {
            self.core = core
            self.onFirstFrame = onFirstFrame
            self.onEnd = onEnd
        }
    }

    private func runWriter(onFirstFrame: @Sendable (UInt64) -> Void, onEnd: @Sendable (PlaybackError?) -> Void) {
        let error = writeLoop(onFirstFrame: onFirstFrame)
        snd_pcm_close(pcm)
        onEnd(error)
        lock.withLock {
            phase = .finished
            lock.broadcastLocked()
        }
    }

    /// What the writing thread is to do next, decided under `lock`.
    private enum Next {
        case stop
        case write([Int16])
        case drain
        case idle
    }

    private func next(haveData: Bool) -> Next {
        lock.withLock {
            if stopRequested { return .stop }
            if haveData { return .write([]) }
            if queueHead < queue.count {
                let segment = queue[queueHead]
                queueHead += 1
                if queueHead == queue.count {
                    queue = []
                    queueHead = 0
                }
                return .write(segment)
            }
            return finishRequested ? .drain : .idle
        }
    }

    /// Writes until stopped or drained (nil) or until an unrecoverable error (returned).
    private func writeLoop(onFirstFrame: @Sendable (UInt64) -> Void) -> PlaybackError? {
        let channels = Int(format.channels)
        let rate = UInt64(format.sampleRate)
        var segment: [Int16] = []
        var offset = 0 // in frames
        var firstWrite: UInt64?
        var written: UInt64 = 0
        var preparedWithoutData = false
        var pollDescriptors: [pollfd] = []
        let periodNanoseconds = UInt64(periodFrames) * 1_000_000_000 / rate
        let pollTimeoutMilliseconds = Int32(clamping: max(1000, 2 * UInt64(bufferFrames) * 1000 / rate))

        while true {
            let remaining = segment.count / channels - offset
            switch next(haveData: remaining > 0) {
            case .stop:
                _ = snd_pcm_drop(pcm)
                return nil
            case .drain:
                return drain(periodNanoseconds: periodNanoseconds)
            case .idle:
                // Nothing queued: wait for enqueue, finish or stop. A running device
                // underruns meanwhile; the next write recovers.
                var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
                if poll(&descriptor, 1, pollTimeoutMilliseconds) > 0 { drainWake() }
                continue
            case .write(let fresh):
                if !fresh.isEmpty {
                    segment = fresh
                    offset = 0
                }
            }

            if pacing == .realtime, let firstWrite, written > UInt64(bufferFrames) {
                let due = firstWrite + (written - UInt64(bufferFrames)) * 1_000_000_000 / rate
                if waitUntilWoken(deadline: due) { continue }
            }

            let count = snd_pcm_poll_descriptors_count(pcm)
            if count < 0 {
                if let end = afterFailure(count, preparedWithoutData: &preparedWithoutData, periodNanoseconds: periodNanoseconds) {
                    return end.error
                }
                continue
            }
            if pollDescriptors.count != Int(count) + 1 {
                pollDescriptors = [pollfd](repeating: pollfd(), count: Int(count) + 1)
            }
            pollDescriptors[0] = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            let filled = pollDescriptors.withUnsafeMutableBufferPointer { descriptors in
                snd_pcm_poll_descriptors(pcm, descriptors.baseAddress! + 1, UInt32(count))
            }
            if filled < 0 {
                if let end = afterFailure(filled, preparedWithoutData: &preparedWithoutData, periodNanoseconds: periodNanoseconds) {
                    return end.error
                }
                continue
            }
            let ready = poll(&pollDescriptors, nfds_t(filled + 1), pollTimeoutMilliseconds)
            if ready < 0 {
                let code = errno
                if code == EINTR { continue }
                return .io(device: device, code: -code, message: "poll failed: " + alsaMessage(-code))
            }
            if pollDescriptors[0].revents != 0 {
                drainWake()
                continue
            }
            if ready == 0 {
                if snd_pcm_state(pcm) == SND_PCM_STATE_DISCONNECTED {
                    return .deviceGone(device: device, message: "the device is disconnected")
                }
                continue
            }
            var events: UInt16 = 0
            let translated = pollDescriptors.withUnsafeMutableBufferPointer { descriptors in
                snd_pcm_poll_descriptors_revents(pcm, descriptors.baseAddress! + 1, UInt32(filled), &events)
            }
            if translated < 0 {
                if let end = afterFailure(translated, preparedWithoutData: &preparedWithoutData, periodNanoseconds: periodNanoseconds) {
                    return end.error
                }
                continue
            }
            if Int32(events) & Int32(POLLOUT | POLLERR | POLLHUP | POLLNVAL) == 0 { continue }

            let frames = min(segment.count / channels - offset, bufferFrames)
            let result = segment.withUnsafeBufferPointer { samples in
                snd_pcm_writei(pcm, samples.baseAddress! + offset * channels, snd_pcm_uframes_t(frames))
            }
            if result > 0 {
                let now = monotonicNanoseconds()
                offset += Int(result)
                written += UInt64(result)
                preparedWithoutData = false
                framesWritten.add(UInt64(result), ordering: .relaxed)
                if firstWrite == nil {
                    firstWrite = now
                    onFirstFrame(now / 1000)
                }
                continue
            }
            if result == 0 || result == -Int(EAGAIN) { continue }
            if let end = afterFailure(Int32(clamping: result), preparedWithoutData: &preparedWithoutData,
                                      periodNanoseconds: periodNanoseconds) {
                return end.error
            }
        }
    }

    /// Plays out what the device holds, then returns nil; or returns early on `stop()`
    /// (after `snd_pcm_drop`) or with an error.
    private func drain(periodNanoseconds: UInt64) -> PlaybackError? {
        let result = snd_pcm_drain(pcm)
        if result == 0 { return nil }
        if result != -EAGAIN {
            // An underrun while draining means everything has played.
            if result == -EPIPE { return nil }
            return failure(result, what: "drain failed")
        }
        // Non-blocking: the device drains by itself; check its state now and then.
        let step = max(1_000_000, min(periodNanoseconds / 2, 20_000_000))
        while snd_pcm_state(pcm) == SND_PCM_STATE_DRAINING {
            if waitUntilWoken(deadline: monotonicNanoseconds() + step), lock.withLock({ stopRequested }) {
                _ = snd_pcm_drop(pcm)
                return nil
            }
        }
        if snd_pcm_state(pcm) == SND_PCM_STATE_DISCONNECTED {
            return .deviceGone(device: device, message: "the device is disconnected")
        }
        return nil
    }

    /// The end of the loop, carrying its error (nil for a stop).
    private struct End {
        var error: PlaybackError?
    }

    /// Recovers from a negative libasound result; nil means go on, an `End` means finish.
    private func afterFailure(_ code: Int32, preparedWithoutData: inout Bool, periodNanoseconds: UInt64) -> End? {
        let state = snd_pcm_state(pcm)
        switch classify(errorCode: code, state: state) {
        case .retry:
            if waitUntilWoken(deadline: monotonicNanoseconds() + max(1_000_000, periodNanoseconds / 4)),
               lock.withLock({ stopRequested }) {
                _ = snd_pcm_drop(pcm)
                return End(error: nil)
            }
            return nil
        case .recoverOverrun, .recoverSuspend:
            // An underrun (-EPIPE) or a suspend (-ESTRPIPE): snd_pcm_recover prepares (after
            // resuming, for a suspend); the next write restarts the stream.
            let result = snd_pcm_recover(pcm, code, 1)
            if result < 0 { return End(error: failure(result, what: "recovering from \"\(alsaMessage(code))\" failed")) }
            recoveries.add(1, ordering: .relaxed)
            return nil
        case .prepareOrGone:
            let what = alsaMessage(code)
            if preparedWithoutData {
                return End(error: .deviceGone(device: device, message: "\(what), again right after a prepare"))
            }
            let prepared = snd_pcm_prepare(pcm)
            if prepared < 0 {
                return End(error: .deviceGone(device: device, message: "\(what), and prepare failed: \(alsaMessage(prepared))"))
            }
            preparedWithoutData = true
            recoveries.add(1, ordering: .relaxed)
            return nil
        case .deviceGone:
            return End(error: .deviceGone(device: device, message: alsaMessage(code)))
        case .fatal:
            return End(error: .io(device: device, code: code, message: alsaMessage(code)))
        }
    }

    private func failure(_ code: Int32, what: String) -> PlaybackError {
        let message = what + ": " + alsaMessage(code)
        switch classify(errorCode: code, state: snd_pcm_state(pcm)) {
        case .deviceGone, .prepareOrGone: return .deviceGone(device: device, message: message)
        default: return .io(device: device, code: code, message: message)
        }
    }

    /// Sleeps until `deadline` (CLOCK_MONOTONIC ns) or until woken through the pipe
    /// (enqueue, finish, stop); returns whether it was woken.
    private func waitUntilWoken(deadline: UInt64) -> Bool {
        while true {
            let now = monotonicNanoseconds()
            if now >= deadline { return false }
            let milliseconds = Int32(clamping: (deadline - now + 999_999) / 1_000_000)
            var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, milliseconds) > 0 {
                drainWake()
                return true
            }
        }
    }

    private func drainWake() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &bytes, bytes.count) > 0 {}
    }
}
