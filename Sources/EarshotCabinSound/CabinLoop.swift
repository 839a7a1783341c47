import EarshotVoice
import Foundation
import Glibc
import Synchronization

/// A cabin between a speaker and a microphone, live: what the alert service plays into a
/// FIFO (an ALSA `file` PCM, raw 16-bit mono at `speakerRate`) reaches the capture service's
/// microphone (a `file` PCM reading raw 16-bit mono at `rate` from another FIFO) through
/// `room`, an impulse response, on top of `scene`, everything else the microphone hears.
///
/// The cabin is the microphone's clock, as a sound card is: once a reader opens the PCM, it
/// delivers a period (`periodFrames`, which must be what the reader reads at a time) every
/// period's time, and the reader, at `--pace device`, waits for it. Each open hears `scene`
/// from its start (the `file` plugin opens its `infile` on every `snd_pcm_open`), so the
/// reader's n-th sample is `scene`'s n-th plus the echo. The speaker's first frame is heard
/// an output buffer (`speakerBufferMs`, the alert service's `--output-buffer-ms`) after it
/// arrives, and the rest at its own rate (a speaker plays out at a steady rate however its
/// writer fills its buffer). `recorded()` gives what the last reader was given, and the
/// echo's part of it.
///
/// The speakers' monitor (a third FIFO, read as another `file` PCM: an echo reference) hears
/// what they are given, before their output buffer: the alert service's audio as it
/// arrives, and `monitored`, what else they are given (the radio), by the microphone's
/// sample at that moment. It is delivered in 10 ms blocks on the microphone's clock, each
/// once heard, the blocks of a period before the microphone's period; a reader that is not
/// there loses what is written meanwhile.
public final class CabinLoop: Sendable {
    public let speaker: URL
    public let microphone: URL
    public let monitor: URL
    public let speakerRate: Int
    public let rate: Int
    public let periodFrames: Int
    /// How long a frame written to the speaker takes to play (its output buffer), in the
    /// microphone's samples.
    public let speakerBuffer: Int

    private struct State {
        var stopped = false
        var running = false
        var made: [Float] = []
        var echo: [Float] = []
        /// The speaker's audio at `rate`, and the microphone sample its first is heard with.
        var played: [Float] = []
        var playedFrom: Int?
        /// Speaker samples that arrived after the microphone's sample they belong with had
        /// gone out (a speaker's writer that fell behind real time): not heard.
        var late = 0
    }

    private let state = Mutex(State())
    private let scene: [Float]
    private let monitored: [Float]
    /// The room's taps that are not zero: (delay in samples, gain).
    private let taps: [(Int, Float)]
    private let finished = DispatchSemaphore(value: 0)

    /// Makes both FIFOs in `directory`; `start()` opens them (before either service does).
    /// The speaker's output buffer unless told.
    public static let defaultSpeakerBufferMs = 100

    public init(directory: URL, speakerRate: Int, rate: Int, periodFrames: Int, speakerBufferMs: Int = defaultSpeakerBufferMs,
                scene: [Float], room: [Float],
                monitored: [Float] = []) throws {
        speaker = directory.appendingPathComponent("cabin-speaker.fifo")
        microphone = directory.appendingPathComponent("cabin-microphone.fifo")
        monitor = directory.appendingPathComponent("cabin-monitor.fifo")
        for fifo in [speaker, microphone, monitor] {
            unlink(fifo.path)
            guard mkfifo(fifo.path, 0o600) == 0 else { throw CabinLoopError("mkfifo \(fifo.path): \(String(cString: strerror(errno)))") }
        }
        self.speakerRate = speakerRate
        self.rate = rate
        self.periodFrames = periodFrames
        speakerBuffer = rate * speakerBufferMs / 1000
        self.scene = scene
        self.monitored = monitored
        taps = room.enumerated().compactMap { $0.element == 0 ? nil : ($0.offset, $0.element) }
    }

    /// Opens the speaker's FIFO (so that the alert service's open does not wait) and starts
    /// the cabin on a thread of its own.
    public func start() throws {
        signal(SIGPIPE, SIG_IGN)  // a reader that closes between two periods
        let speakerFD = open(speaker.path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard speakerFD >= 0 else { throw CabinLoopError("opening \(speaker.path): \(String(cString: strerror(errno)))") }
        // Open for writing without waiting for a reader, and never waiting on one.
        let monitorFD = open(monitor.path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard monitorFD >= 0 else {
            close(speakerFD)
            throw CabinLoopError("opening \(monitor.path): \(String(cString: strerror(errno)))")
        }
        _ = try StreamingResampler(from: speakerRate, to: rate)  // the rates are checked here
        state.withLock { $0.running = true }
        Thread.detachNewThread { [self] in
            if let resampler = try? StreamingResampler(from: speakerRate, to: rate) {
                run(speakerFD: speakerFD, monitorFD: monitorFD, resampler: resampler)
            }
            close(speakerFD)
            close(monitorFD)
            finished.signal()
        }
    }

    /// Stops the cabin; returns what the microphone was given and the echo's part of it.
    @discardableResult
    public func stop() -> (made: [Float], echo: [Float]) {
        let running = state.withLock { s -> Bool in
            defer { s.stopped = true }
            return !s.stopped && s.running
        }
        if running {
            // A cabin waiting for a reader in open() gets one, sees the stop and ends.
            let reader = open(microphone.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            finished.wait()
            if reader >= 0 { close(reader) }
        }
        return recorded()
    }

    /// What the microphone was given so far, and the echo's part of it.
    public func recorded() -> (made: [Float], echo: [Float]) {
        state.withLock { ($0.made, $0.echo) }
    }

    /// Speaker samples (at `rate`) that came too late to be heard: its writer fell behind.
    public var lateSpeakerSamples: Int { state.withLock { $0.late } }

    /// The microphone sample the speaker's first frame is heard with (before the room's
    /// delay), once it played.
    public var speakerHeardFrom: Int? { state.withLock { $0.playedFrom } }

    private var stopped: Bool { state.withLock { $0.stopped } }

    /// Serves one reader after another until stopped.
    private func run(speakerFD: Int32, monitorFD: Int32, resampler: StreamingResampler) {
        while !stopped {
            let microphoneFD = open(microphone.path, O_WRONLY | O_CLOEXEC)  // waits for a reader
            if microphoneFD < 0 {
                if errno == EINTR { continue }
                return
            }
            if !stopped { serve(microphoneFD, speakerFD: speakerFD, monitorFD: monitorFD, resampler: resampler) }
            close(microphoneFD)
            // The monitor's FIFO, open at both ends here, keeps what the reader's echo
            // reference left unread: a device starts afresh at each open, so that goes. Only
            // `serve` writes to it, so the next reader finds it empty.
            Self.drain(monitorFD)
        }
    }

    /// Delivers `scene` and the echo to one reader, a period each period's time, until it
    /// closes; listens to the speaker every 5 ms in between.
    private func serve(_ microphoneFD: Int32, speakerFD: Int32, monitorFD: Int32, resampler: StreamingResampler) {
        state.withLock { s in
            (s.made, s.echo, s.played, s.playedFrom, s.late) = ([], [], [], nil, 0)
        }
        let periodNanoseconds = UInt64(periodFrames) * 1_000_000_000 / UInt64(rate)
        // Each period once it has been heard, as a sound card gives it: nothing is written
        // before the first period's time. A reader that only looks (capture probing the
        // device) and closes at once leaves nothing behind in the FIFO for the next.
        var due = Self.now() + periodNanoseconds
        // The monitor's blocks, each once heard too, on the same clock: the block that ends
        // where a period ends is written with it, just before it.
        let block = rate / 100
        let blockNanoseconds = UInt64(block) * 1_000_000_000 / UInt64(rate)
        var monitorDue = due + blockNanoseconds - periodNanoseconds
        var monitorSent = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var heldByte: UInt8?
        while !stopped {
            // The speaker: whatever has been written since.
            let n = buffer.withUnsafeMutableBytes { read(speakerFD, $0.baseAddress, $0.count) }
            if n > 0 {
                var bytes = Array(buffer[0 ..< n])
                if let byte = heldByte { bytes.insert(byte, at: 0) }
                heldByte = bytes.count % 2 == 1 ? bytes.removeLast() : nil
                let samples = stride(from: 0, to: bytes.count, by: 2).map {
                    Float(Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)) / 32768
                }
                let resampled = (try? resampler.process(samples)) ?? []
                state.withLock { s in
                    if s.playedFrom == nil { s.playedFrom = s.made.count + speakerBuffer }
                    let first = s.playedFrom! + s.played.count
                    s.late += max(0, min(resampled.count, s.made.count - first))
                    s.played += resampled
                }
            }
            let now = Self.now()
            while now >= monitorDue {
                let samples = CabinSound.pcm16(monitorBlock(from: monitorSent, count: block))
                _ = samples.withUnsafeBytes { write(monitorFD, $0.baseAddress, $0.count) }  // lost when nobody reads
                monitorSent += block
                monitorDue += blockNanoseconds
            }
            guard now >= due else {
                usleep(UInt32(min(5_000, (due - now) / 1000)))
                continue
            }
            // The microphone: the period just heard, in one write (atomic up to a page).
            let period = CabinSound.pcm16(nextPeriod())
            let written = period.withUnsafeBytes { write(microphoneFD, $0.baseAddress, $0.count) }
            if written < period.count { return }  // the reader has closed
            due += periodNanoseconds
        }
    }

    /// The monitor's `count` samples from `first`: what the speakers are given then, the
    /// alert service's audio a speaker buffer before it is heard, and `monitored`.
    private func monitorBlock(from first: Int, count: Int) -> [Float] {
        state.withLock { s in
            var samples = [Float](repeating: 0, count: count)
            for index in 0 ..< count {
                let at = first + index
                if at < monitored.count { samples[index] = monitored[at] }
                if let from = s.playedFrom {
                    let source = at - (from - speakerBuffer)
                    if source >= 0, source < s.played.count { samples[index] += s.played[source] }
                }
            }
            return samples
        }
    }

    /// The next period: `scene` and what the speaker played, through the room.
    private func nextPeriod() -> [Float] {
        state.withLock { s in
            let first = s.made.count
            let block = periodFrames
            var echo = [Float](repeating: 0, count: block)
            if let from = s.playedFrom {
                // Each tap adds the speaker's samples it reaches, delayed and scaled.
                s.played.withUnsafeBufferPointer { played in
                    echo.withUnsafeMutableBufferPointer { out in
                        for (delay, gain) in taps {
                            let source = first - from - delay
                            if source + block <= 0 { break }
                            let lower = max(0, -source), upper = min(block, played.count - source)
                            guard lower < upper else { continue }
                            for index in lower ..< upper { out[index] += gain * played[source + index] }
                        }
                    }
                }
            }
            var samples = echo
            for index in 0 ..< block where first + index < scene.count { samples[index] += scene[first + index] }
            s.echo += echo
            s.made += samples
            return samples
        }
    }

    /// Reads and drops what `fd` (non-blocking) holds.
    private static func drain(_ fd: Int32) {
        var scratch = [UInt8](repeating: 0, count: 1 << 16)
        while scratch.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}

public struct CabinLoopError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
