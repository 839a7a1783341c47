import CALSA
import EarshotSync
import Glibc
import Synchronization

/// Faults the tests inject into a running stream, through real libasound calls made on the
/// reading thread before its next poll.
enum InjectedFault: Sendable {
    /// `snd_pcm_drop`: the PCM falls back to SETUP, the next read fails with `-EBADFD`,
    /// which a prepare cures.
    case drop
    /// `snd_pcm_drop` then `snd_pcm_hw_free`: the PCM falls back to OPEN and no prepare can
    /// cure it, as with a device that has gone away.
    case hardwareFree
}

/// The state a `CaptureStream` shares with its reading thread.
final class CaptureCore: @unchecked Sendable {
    // @unchecked Sendable: `pcm` is used by the opening thread until `start` (which hands it
    // to the reading thread under `lock`), then only by the reading thread, which closes it;
    // if the stream never started, `stop` closes it under `lock`. The wake-up descriptors
    // are plain integers, closed in deinit. Everything else mutable is guarded by `lock` or
    // atomic.
    let device: String
    let format: PCMFormat
    let periodFrames: Int
    let bufferFrames: Int
    let pacing: CapturePacing
    private let pcm: OpaquePointer
    private let wakeRead: Int32
    private let wakeWrite: Int32

    let recoveries = Atomic<Int>(0)
    let framesRead = Atomic<UInt64>(0)

    private enum Phase {
        /// Opened and configured, not started.
        case ready
        /// The reading thread owns the PCM.
        case running
        /// The PCM is closed (and `onEnd` was called, if the stream was started).
        case finished
    }

    private let lock = ThreadLock()
    // Guarded by `lock`:
    private var phase = Phase.ready
    private var stopRequested = false
    private var readerThread: pthread_t?
    private var pendingFault: InjectedFault?

    init(pcm: OpaquePointer, device: String, format: PCMFormat, periodFrames: Int, bufferFrames: Int,
         pacing: CapturePacing, wakeRead: Int32, wakeWrite: Int32) {
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
        // Only reached once neither the stream nor the reading thread holds the core, so the
        // PCM is closed already unless the stream was never started nor stopped.
        if phase != .finished { snd_pcm_close(pcm) }
        close(wakeRead)
        close(wakeWrite)
    }

    // MARK: - Control (any thread)

    func start(onData: @escaping @Sendable ([UInt8], Int, UInt64) -> Void,
               onEnd: @escaping @Sendable (ALSAError?) -> Void) {
        enum Outcome { case started, ignored, endedAlready, failed(ALSAError) }
        let outcome: Outcome = lock.withLock {
            switch phase {
            case .running: return .ignored
            case .finished: return .endedAlready
            case .ready: break
            }
            let context = Unmanaged.passRetained(ReaderContext(core: self, onData: onData, onEnd: onEnd))
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
            defer { pthread_attr_destroy(&attributes) }
            var thread = pthread_t()
            let result = pthread_create(&thread, &attributes, { argument in
                let context = Unmanaged<ReaderContext>.fromOpaque(argument!).takeRetainedValue()
                context.core.runReader(onData: context.onData, onEnd: context.onEnd)
                return nil
            }, context.toOpaque())
            guard result == 0 else {
                context.release()
                snd_pcm_close(pcm)
                phase = .finished
                return .failed(.io(device: device, code: -result,
                                   message: "cannot start the reading thread: " + alsaMessage(-result)))
            }
            readerThread = thread
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
            switch phase {
            case .finished:
                return
            case .ready:
                snd_pcm_close(pcm)
                phase = .finished
            case .running:
                wake()
                if let readerThread, pthread_equal(readerThread, pthread_self()) != 0 { return }
                lock.waitLocked { phase == .finished }
            }
        }
    }

    /// Makes the reading thread apply `fault` before its next poll (tests only).
    func inject(_ fault: InjectedFault) {
        lock.withLock {
            pendingFault = fault
            if phase == .running { wake() }
        }
    }

    private func wake() {
        var byte: UInt8 = 1
        // A full pipe already holds a wake-up, so a failed write loses nothing.
        _ = write(wakeWrite, &byte, 1)
    }

    // MARK: - Reading thread

    private final class ReaderContext {
        let core: CaptureCore
        let onData: @Sendable ([UInt8], Int, UInt64) -> Void
        let onEnd: @Sendable (ALSAError?) -> Void
        init(core: CaptureCore, onData: @escaping @Sendable ([UInt8], Int, UInt64) -> Void,
             onEnd: @escaping @Sendable (ALSAError?) -> Void) {
            self.core = core
            self.onData = onData
            self.onEnd = onEnd
        }
    }

    private func runReader(onData: @Sendable ([UInt8], Int, UInt64) -> Void,
                           onEnd: @Sendable (ALSAError?) -> Void) {
        let error = readLoop(onData: onData)
        snd_pcm_close(pcm)
        onEnd(error)
        lock.withLock {
            phase = .finished
            lock.broadcastLocked()
        }
    }

    /// What happened to an attempt at recovering from an error.
    private enum Recovery {
        /// Reading goes on.
        case resumed
        /// Nothing to recover from (`-EAGAIN`, `-EINTR`).
        case nothing
        /// `stop()` was requested while waiting for the device.
        case stopped
        /// The stream ends with this error.
        case ended(ALSAError)
    }

    /// Reads until stopped (nil) or until an unrecoverable error (returned).
    private func readLoop(onData: @Sendable ([UInt8], Int, UInt64) -> Void) -> ALSAError? {
        let bytesPerFrame = format.bytesPerFrame
        // Where a read leaves bytes untouched (`null` writes nothing; `file` at the end of its
        // input leaves the rest of the buffer), the caller gets silence, not stale data.
        let silence = format.silenceByte
        var buffer = [UInt8](repeating: silence, count: periodFrames * bytesPerFrame)
        var pollDescriptors: [pollfd] = []
        // Set by a prepare-based recovery, cleared by the next frames: a second bad state
        // without any frame in between means the device is not coming back.
        var preparedWithoutData = false
        let periodNanoseconds = UInt64(periodFrames) * 1_000_000_000 / UInt64(format.sampleRate)
        // A stalled device still gets its state checked now and then.
        let pollTimeoutMilliseconds = Int32(clamping: max(1000, 2 * UInt64(bufferFrames) * 1000 / UInt64(format.sampleRate)))

        let started = snd_pcm_start(pcm)
        if started < 0 {
            switch recover(from: started, preparedWithoutData: &preparedWithoutData) {
            case .resumed, .nothing: break
            case .stopped: return nil
            case .ended(let error): return error
            }
        }
        let clockStart = monotonicNanoseconds()
        var delivered: UInt64 = 0

        while true {
            let (stopping, fault) = lock.withLock { () -> (Bool, InjectedFault?) in
                defer { pendingFault = nil }
                return (stopRequested, pendingFault)
            }
            if stopping { return nil }
            if let fault { apply(fault) }
            // Paced like a live microphone: a period is read once it has been "heard",
            // not before.
            if pacing == .realtime {
                let due = clockStart + (delivered + UInt64(periodFrames)) * 1_000_000_000 / UInt64(format.sampleRate)
                if waitUntilStopped(deadline: due) { return nil }
            }

            // The PCM's descriptors (fetched each time: they may change across a recovery)
            // after the wake-up pipe.
            let count = snd_pcm_poll_descriptors_count(pcm)
            if count < 0 {
                switch afterFailure(count, preparedWithoutData: &preparedWithoutData, periodNanoseconds: periodNanoseconds) {
                case .goOn: continue
                case .finish(let error): return error
                }
            }
            if pollDescriptors.count != Int(count) + 1 {
                pollDescriptors = [pollfd](repeating: pollfd(), count: Int(count) + 1)
            }
            pollDescriptors[0] = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            let filled = pollDescriptors.withUnsafeMutableBufferPointer { descriptors in
                snd_pcm_poll_descriptors(pcm, descriptors.baseAddress! + 1, UInt32(count))
            }
            if filled < 0 {
                switch afterFailure(filled, preparedWithoutData: &preparedWithoutData, periodNanoseconds: periodNanoseconds) {
                case .goOn: continue
                case .finish(let error): return error
                }
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
                switch afterFailure(translated, preparedWithoutData: &preparedWithoutData, periodNanoseconds: periodNanoseconds) {
                case .goOn: continue
                case .finish(let error): return error
                }
            }
            if Int32(events) & Int32(POLLIN | POLLERR | POLLHUP | POLLNVAL) == 0 { continue }

            let result = buffer.withUnsafeMutableBytes { bytes in
                bytes.initializeMemory(as: UInt8.self, repeating: silence)
                return snd_pcm_readi(pcm, bytes.baseAddress, snd_pcm_uframes_t(periodFrames))
            }
            let now = monotonicNanoseconds() / 1000
            if result > 0 {
                let frames = Int(result)
                preparedWithoutData = false
                delivered += UInt64(frames)
                framesRead.add(UInt64(frames), ordering: .relaxed)
                onData(Array(buffer[0 ..< frames * bytesPerFrame]), frames, now)
                continue
            }
            let outcome: Recovery
            if result == 0 {
                outcome = .nothing
            } else {
                outcome = recover(from: Int32(clamping: result), preparedWithoutData: &preparedWithoutData)
            }
            switch outcome {
            case .resumed:
                continue
            case .nothing:
                // Ready by poll, yet nothing read.
                if pauseBriefly(periodNanoseconds) { return nil }
            case .stopped:
                return nil
            case .ended(let error):
                return error
            }
        }
    }

    /// Recovers from a negative libasound result as `classify` says.
    /// What the reading loop does after a failed libasound call: go on (after recovering,
    /// or after a short pause when there was nothing to recover from), or finish.
    private enum LoopStep {
        case goOn
        case finish(ALSAError?)
    }

    private func afterFailure(_ code: Int32, preparedWithoutData: inout Bool, periodNanoseconds: UInt64) -> LoopStep {
        switch recover(from: code, preparedWithoutData: &preparedWithoutData) {
        case .resumed: return .goOn
        case .nothing: return pauseBriefly(periodNanoseconds) ? .finish(nil) : .goOn
        case .stopped: return .finish(nil)
        case .ended(let error): return .finish(error)
        }
    }

    private func recover(from code: Int32, preparedWithoutData: inout Bool) -> Recovery {
        let state = snd_pcm_state(pcm)
        switch classify(errorCode: code, state: state) {
        case .retry:
            return .nothing
        case .recoverOverrun:
            let result = snd_pcm_recover(pcm, code, 1)
            if result < 0 { return .ended(failedRecovery(from: code, result)) }
            return restart(after: code)
        case .recoverSuspend:
            // snd_pcm_recover would sleep a whole second per -EAGAIN; wait here instead, where
            // stop() can interrupt.
            while true {
                let result = snd_pcm_resume(pcm)
                if result == -EAGAIN {
                    if waitUntilStopped(deadline: monotonicNanoseconds() + 100_000_000) { return .stopped }
                    continue
                }
                if result < 0 {
                    let prepared = snd_pcm_prepare(pcm)
                    if prepared < 0 { return .ended(failedRecovery(from: code, prepared)) }
                }
                break
            }
            return restart(after: code)
        case .prepareOrGone:
            let what = alsaMessage(code)
            if preparedWithoutData {
                return .ended(.deviceGone(device: device, message:
                    "\(what), again right after a prepare (PCM state \(stateName(snd_pcm_state(pcm))))"))
            }
            let prepared = snd_pcm_prepare(pcm)
            if prepared < 0 {
                return .ended(.deviceGone(device: device, message:
                    "\(what), and prepare failed: \(alsaMessage(prepared)) (PCM state \(stateName(snd_pcm_state(pcm))))"))
            }
            preparedWithoutData = true
            switch restart(after: code) {
            case .ended(let error):
                return .ended(.deviceGone(device: device, message: "\(what), and \(error)"))
            case let other:
                return other
            }
        case .deviceGone:
            if state == SND_PCM_STATE_DISCONNECTED {
                return .ended(.deviceGone(device: device, message: "the device is disconnected (\(alsaMessage(code)))"))
            }
            return .ended(.deviceGone(device: device, message: alsaMessage(code)))
        case .fatal:
            return .ended(.io(device: device, code: code, message: alsaMessage(code)))
        }
    }

    /// Starts a prepared PCM again after a recovery, and counts the recovery.
    private func restart(after code: Int32) -> Recovery {
        if snd_pcm_state(pcm) == SND_PCM_STATE_PREPARED {
            let result = snd_pcm_start(pcm)
            if result < 0 { return .ended(failedRecovery(from: code, result)) }
        }
        recoveries.add(1, ordering: .relaxed)
        return .resumed
    }

    /// The error for a recovery step that failed with `result`.
    private func failedRecovery(from code: Int32, _ result: Int32) -> ALSAError {
        let message = "recovering from \"\(alsaMessage(code))\" failed: \(alsaMessage(result))"
        switch classify(errorCode: result, state: snd_pcm_state(pcm)) {
        case .deviceGone, .prepareOrGone: return .deviceGone(device: device, message: message)
        default: return .io(device: device, code: result, message: message)
        }
    }

    private func apply(_ fault: InjectedFault) {
        _ = snd_pcm_drop(pcm)
        if fault == .hardwareFree { _ = snd_pcm_hw_free(pcm) }
    }

    /// After a wake-up that brought nothing: instead of spinning, gives the device a quarter
    /// period (at least 1 ms). Returns whether `stop()` was requested meanwhile.
    private func pauseBriefly(_ periodNanoseconds: UInt64) -> Bool {
        waitUntilStopped(deadline: monotonicNanoseconds() + max(1_000_000, periodNanoseconds / 4))
    }

    /// Sleeps until `deadline` (CLOCK_MONOTONIC ns) unless `stop()` is requested first;
    /// returns whether it was.
    private func waitUntilStopped(deadline: UInt64) -> Bool {
        while true {
            if lock.withLock({ stopRequested }) { return true }
            let now = monotonicNanoseconds()
            if now >= deadline { return false }
            let milliseconds = Int32(clamping: (deadline - now + 999_999) / 1_000_000)
            var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, milliseconds) > 0 { drainWake() }
        }
    }

    private func drainWake() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &bytes, bytes.count) > 0 {}
    }

    private func stateName(_ state: snd_pcm_state_t) -> String {
        guard let name = snd_pcm_state_name(state) else { return "\(state.rawValue)" }
        return String(cString: name)
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
