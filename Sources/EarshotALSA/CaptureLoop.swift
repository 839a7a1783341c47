import CALSA
import CCapturePump
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

/// Which reads of a `CaptureStream` are timed (`CLOCK_MONOTONIC`, read right after them).
public enum CaptureTimestamps: Sendable {
    /// Every read.
    case everyRead
    /// The first read only; later reads are given 0.
    case firstRead
}

/// The state a `CaptureStream` shares with its reading thread (a `PCMThread`).
final class CaptureLoop: @unchecked Sendable {
    // @unchecked Sendable: the PCM belongs to `thread` (see PCMThread); `pendingFault` is
    // guarded by `thread.lock`; `attention` is only used through its atomic C functions;
    // everything else is immutable or atomic (the state of direct writes is a local of the
    // reading thread's loop).
    let device: String
    let format: PCMFormat
    let periodFrames: Int
    let bufferFrames: Int
    let pacing: CapturePacing
    private let thread: PCMThread<ALSACapture>
    private var pcm: OpaquePointer { thread.pcm }

    let recoveries = Atomic<Int>(0)
    let framesRead = Atomic<UInt64>(0)
    /// Raised by `redirect()` (and at first): the reading thread asks its direct consumer
    /// again.
    private let attention: UnsafeMutablePointer<earshot_pump_flag>

    // Guarded by `thread.lock`:
    private var pendingFault: InjectedFault?
    private var drainRequested = false

    init(thread: PCMThread<ALSACapture>, format: PCMFormat, periodFrames: Int, bufferFrames: Int, pacing: CapturePacing) {
        self.thread = thread
        device = thread.device
        self.format = format
        self.periodFrames = max(1, periodFrames)
        self.bufferFrames = max(1, bufferFrames)
        self.pacing = pacing
        attention = .allocate(capacity: 1)
        attention.initialize(to: earshot_pump_flag(value: 1))
    }

    deinit {
        attention.deinitialize(count: 1)
        attention.deallocate()
    }

    // MARK: - Control (any thread)

    func start(timestamps: CaptureTimestamps, direct: (any DirectCaptureConsumer)?,
               onData: @escaping @Sendable ([UInt8], Int, UInt64) -> Void, onEnd: @escaping @Sendable (ALSAError?) -> Void) {
        thread.start({ [self] in readLoop(timestamps: timestamps, direct: direct, onData: onData) }, onEnd: onEnd)
    }

    /// Makes the reading thread ask its direct consumer where reads go before its next read.
    func redirect() {
        earshot_pump_flag_raise(attention)
    }

    func stop(draining: Bool = false) {
        thread.stop {
            if draining { drainRequested = true }
        }
    }

    /// Makes the reading thread apply `fault` before its next poll (tests only).
    func inject(_ fault: InjectedFault) {
        thread.lock.withLock {
            pendingFault = fault
            thread.wakeLocked()
        }
    }

    // MARK: - Reading thread

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

    /// Where the reading thread writes reads itself (`earshot_pump_write`), and what it
    /// wrote so far. Only the reading thread uses it.
    private final class DirectWriting {
        var pump: earshot_pump
        private let descriptors: UnsafeMutableBufferPointer<Int32>
        /// Keeps the writes' counter alive.
        private let counter: FrameCounter

        init(_ writes: DirectWrites, format: PCMFormat) {
            descriptors = .allocate(capacity: max(1, writes.descriptors.count))
            _ = descriptors.initialize(from: writes.descriptors)
            counter = writes.counter
            pump = earshot_pump()
            pump.frame_bytes = UInt(format.bytesPerFrame)
            pump.descriptors = UnsafePointer(descriptors.baseAddress)
            pump.descriptor_count = Int32(writes.descriptors.count)
            pump.frames_left = writes.framesLeft
            pump.counter = writes.counter.storage
        }

        deinit {
            descriptors.deallocate()
        }

        /// Runs `call` on the writes with `buffer` as their buffer (made unique first, as
        /// any write to it would).
        func withBuffer<Result>(_ buffer: inout [UInt8], _ call: (UnsafeMutablePointer<earshot_pump>) -> Result) -> Result {
            buffer.withUnsafeMutableBytes { bytes in
                pump.buffer = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
                return call(&pump)
            }
        }

        /// The read a descriptor did not take in full, from `buffer`.
        func unfinished(in buffer: [UInt8]) -> UnfinishedWrite {
            UnfinishedWrite(bytes: Array(buffer[0 ..< Int(pump.unfinished_bytes)]), frames: UInt64(pump.unfinished_frames),
                            index: Int(pump.unfinished_index), written: Int(pump.unfinished_written), error: pump.unfinished_error)
        }
    }

    /// Reads until stopped (nil) or until an unrecoverable error (returned); reports what
    /// went out directly before it returns.
    private func readLoop(timestamps: CaptureTimestamps, direct: (any DirectCaptureConsumer)?,
                          onData: @Sendable ([UInt8], Int, UInt64) -> Void) -> ALSAError? {
        var writing: DirectWriting?
        let error = readPeriods(timestamps: timestamps, direct: direct, writing: &writing, onData: onData)
        if let direct, let stopped = writing { direct.directWritesStopped(frames: stopped.pump.frames_written, unfinished: nil) }
        return error
    }

    /// The reading loop: `writing` is where reads go directly, if anywhere.
    private func readPeriods(timestamps: CaptureTimestamps, direct: (any DirectCaptureConsumer)?, writing: inout DirectWriting?,
                             onData: @Sendable ([UInt8], Int, UInt64) -> Void) -> ALSAError? {
        let bytesPerFrame = format.bytesPerFrame
        // Where a read leaves bytes untouched (`null` writes nothing; `file` at the end of its
        // input leaves the rest of the buffer), the caller gets silence, not stale data.
        let silence = format.silenceByte
        // Handed over as it is after a whole period's read: a consumer that lets it go
        // before the next read leaves it to be reused, with no allocation or copy per read.
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
        // Whether the last poll found the PCM ready to read.
        var polledReady = false

        /// Hands over `frames` frames read into `buffer`: to the direct descriptors, or to `onData`.
        func deliver(_ frames: Int) {
            preparedWithoutData = false
            framesRead.add(UInt64(frames), ordering: .relaxed)
            if let target = writing {
                delivered += UInt64(frames)
                let stop = target.withBuffer(&buffer) { earshot_pump_write($0, UInt(frames)) }
                if stop != 0 { stopWritingDirectly(unfinished: stop == Int32(EARSHOT_PUMP_UNFINISHED.rawValue)) }
                return
            }
            let now = timestamps == .everyRead || delivered == 0 ? monotonicMicroseconds() : 0
            delivered += UInt64(frames)
            let count = frames * bytesPerFrame
            onData(count == buffer.count ? buffer : Array(buffer[0 ..< count]), frames, now)
        }

        /// Reports what went out directly; reads go to `onData` until the consumer is asked again.
        func stopWritingDirectly(unfinished: Bool) {
            guard let direct, let target = writing else { return }
            writing = nil
            direct.directWritesStopped(frames: target.pump.frames_written, unfinished: unfinished ? target.unfinished(in: buffer) : nil)
        }

        /// Reads up to `frames` (at most a period) into `buffer`, without waiting. (Writing to
        /// `buffer` copies it first only if the last one handed over is still held.)
        func read(_ frames: Int) -> Int {
            buffer.withUnsafeMutableBytes { bytes in
                if let start = bytes.baseAddress { memset(start, Int32(silence), bytes.count) }
                return snd_pcm_readi(pcm, bytes.baseAddress, snd_pcm_uframes_t(frames))
            }
        }

        /// After a stop request: with draining, the frames already captured (what the device
        /// holds, never more than its buffer; paced, those heard by now) are read and
        /// delivered first. The bound matters for a source that never runs dry (`null`, a
        /// `file` PCM past its input's end): it would keep a drain going for ever.
        func stopped() -> ALSAError? {
            guard thread.lock.withLock({ drainRequested }) else { return nil }
            var left = UInt64(bufferFrames)
            if pacing == .realtime {
                let heard = (monotonicNanoseconds() - clockStart) / 1000 * UInt64(format.sampleRate) / 1_000_000
                left = min(left, heard > delivered ? heard - delivered : 0)
            }
            while left > 0 {
                var wanted = min(left, UInt64(periodFrames))
                if pacing == .device {
                    let available = snd_pcm_avail(pcm)
                    guard available > 0 else { break }
                    wanted = min(wanted, UInt64(available))
                }
                let result = read(Int(wanted))
                guard result > 0 else { break }
                deliver(Int(result))
                left -= min(left, UInt64(result))
            }
            return nil
        }

        /// Delivers what a read returned, or recovers from its error.
        func afterRead(_ result: Int) -> LoopStep {
            if result > 0 {
                deliver(result)
                return .goOn
            }
            if result == 0 {
                // Ready, yet nothing read.
                return pauseBriefly(periodNanoseconds) ? .finish(nil) : .goOn
            }
            return afterFailure(Int32(clamping: result), preparedWithoutData: &preparedWithoutData, periodNanoseconds: periodNanoseconds)
        }

        while true {
            if thread.mayHaveRequests {
                let (stopping, fault) = thread.lock.withLock { () -> (Bool, InjectedFault?) in
                    defer { pendingFault = nil }
                    return (thread.stopRequestedLocked, pendingFault)
                }
                if stopping { return stopped() }
                if let fault { apply(fault) }
            }
            // Direct writes: the consumer is asked after the first read (which it sees, with
            // its time), then again whenever it says its answer changed.
            if let direct, delivered > 0, earshot_pump_flag_take(attention) != 0 {
                stopWritingDirectly(unfinished: false)
                writing = direct.directWrites().map {
                    DirectWriting($0, format: format)
                }
            }
            // Paced like a live microphone: a period is read once it has been "heard",
            // not before, and then at once, as a live device's poll would return then.
            if pacing == .realtime {
                let due = clockStart + (delivered + UInt64(periodFrames)) * 1_000_000_000 / UInt64(format.sampleRate)
                if waitUntilStopped(deadline: due) { return stopped() }
            }
            // Read first, poll only when there is nothing to read yet (-EAGAIN). A device
            // waited on in its poll costs one quick -EAGAIN per period this way; a PCM whose
            // read itself waits (a plugin reading a FIFO or a socket, whose descriptors are
            // always ready) saves a poll per period that could only return at once. Nothing
            // to read right after a poll said there was gets a brief pause, as an error
            // does, not a spin between the two.
            let result = read(periodFrames)
            if result != -Int(EAGAIN) || polledReady {
                polledReady = false
                switch afterRead(result) {
                case .goOn: continue
                case .finish(let error): return error
                }
            }
            switch thread.poll(&pollDescriptors, timeoutMilliseconds: pollTimeoutMilliseconds) {
            case .ready(let events):
                // The next turn reads, after checking for a stop.
                polledReady = Int32(events) & Int32(POLLIN | POLLERR | POLLHUP | POLLNVAL) != 0
                continue
            case .again:
                continue
            case .failed(let code):
                switch afterFailure(code, preparedWithoutData: &preparedWithoutData, periodNanoseconds: periodNanoseconds) {
                case .goOn: continue
                case .finish(let error): return error
                }
            case .ended(let error):
                return error
            }
        }
    }

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

    /// Recovers from a negative libasound result as `classify` says.
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
        thread.failure(result, what: "recovering from \"\(alsaMessage(code))\" failed")
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

    private func waitUntilStopped(deadline: UInt64) -> Bool {
        thread.waitUntilStopped(deadline: deadline)
    }

    private func stateName(_ state: snd_pcm_state_t) -> String {
        guard let name = snd_pcm_state_name(state) else { return "\(state.rawValue)" }
        return String(cString: name)
    }
}
