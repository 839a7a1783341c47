import CALSA
import EarshotSync
import Glibc
import Synchronization

/// The state a `PlaybackStream` shares with its writing thread (a `PCMThread`).
final class PlaybackLoop: @unchecked Sendable {
    // @unchecked Sendable: the PCM belongs to `thread` (see PCMThread); the queue and the
    // finish request are guarded by `thread.lock`; everything else is immutable or atomic.
    let device: String
    let format: PCMFormat
    let periodFrames: Int
    let bufferFrames: Int
    let pacing: PlaybackPacing
    private let thread: PCMThread<ALSAPlayback>
    private var pcm: OpaquePointer { thread.pcm }

    let recoveries = Atomic<Int>(0)
    let framesWritten = Atomic<UInt64>(0)
    /// Frames the device held beyond those written when the first write returned: its own
    /// latency (what `snd_pcm_delay` adds to the buffer), -1 until known.
    let latencyFrames = Atomic<Int>(-1)

    // Guarded by `thread.lock`:
    private var finishRequested = false
    private var queue: [[Int16]] = []
    private var queueHead = 0
    private var queuedSamples = 0

    init(thread: PCMThread<ALSAPlayback>, format: PCMFormat, periodFrames: Int, bufferFrames: Int, pacing: PlaybackPacing) {
        self.thread = thread
        device = thread.device
        self.format = format
        self.periodFrames = max(1, periodFrames)
        self.bufferFrames = max(1, bufferFrames)
        self.pacing = pacing
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
        return thread.lock.withLock {
            guard !finishRequested, !thread.stopRequestedLocked, !thread.finishedLocked else { return false }
            if !segment.isEmpty {
                queuedSamples += segment.count
                queue.append(segment)
                thread.wakeLocked()
            }
            return true
        }
    }

    /// Frames queued and not yet handed to the device (0 once the stream has ended).
    var pendingFrames: Int {
        thread.lock.withLock {
            thread.stopRequestedLocked || thread.finishedLocked ? 0 : queuedSamples / Int(format.channels)
        }
    }

    func finish() {
        thread.lock.withLock {
            finishRequested = true
            thread.wakeLocked()
        }
    }

    func start(onFirstFrame: @escaping @Sendable (UInt64) -> Void,
               onEnd: @escaping @Sendable (PlaybackError?) -> Void) {
        thread.start({ [self] in writeLoop(onFirstFrame: onFirstFrame) }, onEnd: onEnd)
    }

    func stop() {
        thread.stop {
            queue = []
            queueHead = 0
            queuedSamples = 0
        }
    }

    // MARK: - Writing thread

    /// What the writing thread is to do next, decided under `lock`.
    private enum Next {
        case stop
        case write([Int16])
        case drain
        case idle
    }

    private func next(haveData: Bool) -> Next {
        thread.lock.withLock {
            if thread.stopRequestedLocked { return .stop }
            if haveData { return .write([]) }
            if queueHead < queue.count {
                let segment = queue[queueHead]
                queue[queueHead] = []  // the writing thread holds it now
                queuedSamples -= segment.count
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
                if let error = drain(periodNanoseconds: periodNanoseconds) { return error }
                // A device paced here (a file-backed test speaker) drains at once: it has
                // played its last frame when real time has caught up with what was written.
                if pacing == .realtime, let firstWrite {
                    let played = firstWrite + written * 1_000_000_000 / rate
                    while monotonicNanoseconds() < played, !thread.isStopRequested {
                        _ = thread.waitUntilWoken(deadline: played)
                    }
                }
                return nil
            case .idle:
                // Nothing queued: wait for enqueue, finish or stop. A running device
                // underruns meanwhile; the next write recovers.
                _ = thread.waitUntilWoken(deadline: monotonicNanoseconds() + UInt64(pollTimeoutMilliseconds) * 1_000_000)
                continue
            case .write(let fresh):
                if !fresh.isEmpty {
                    segment = fresh
                    offset = 0
                }
            }

            if pacing == .realtime, let firstWrite, written > UInt64(bufferFrames) {
                let due = firstWrite + (written - UInt64(bufferFrames)) * 1_000_000_000 / rate
                if thread.waitUntilWoken(deadline: due) { continue }
            }

            let events: UInt16
            switch thread.poll(&pollDescriptors, timeoutMilliseconds: pollTimeoutMilliseconds) {
            case .ready(let ready):
                events = ready
            case .again:
                continue
            case .failed(let code):
                if let end = afterFailure(code, preparedWithoutData: &preparedWithoutData, periodNanoseconds: periodNanoseconds) {
                    return end.error
                }
                continue
            case .ended(let error):
                return error
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
                    var delay: snd_pcm_sframes_t = 0
                    if snd_pcm_delay(pcm, &delay) == 0 { latencyFrames.store(max(0, delay - result), ordering: .relaxed) }
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
            return thread.failure(result, what: "drain failed")
        }
        // Non-blocking: the device drains by itself; check its state now and then.
        let step = max(1_000_000, min(periodNanoseconds / 2, 20_000_000))
        while snd_pcm_state(pcm) == SND_PCM_STATE_DRAINING {
            if thread.waitUntilWoken(deadline: monotonicNanoseconds() + step), thread.isStopRequested {
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
            if thread.waitUntilWoken(deadline: monotonicNanoseconds() + max(1_000_000, periodNanoseconds / 4)),
               thread.isStopRequested {
                _ = snd_pcm_drop(pcm)
                return End(error: nil)
            }
            return nil
        case .recoverOverrun, .recoverSuspend:
            // An underrun (-EPIPE) or a suspend (-ESTRPIPE): snd_pcm_recover prepares (after
            // resuming, for a suspend); the next write restarts the stream.
            let result = snd_pcm_recover(pcm, code, 1)
            if result < 0 { return End(error: thread.failure(result, what: "recovering from \"\(alsaMessage(code))\" failed")) }
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
}
