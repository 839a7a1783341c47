import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc

/// What the speakers play, heard as it is played: a thread reads the monitor recorder's
/// pipe (48 kHz mono 16-bit) in windows of `windowSamples` and keeps, for each window, the
/// level of every watched tone and when its last sample was played. A change of level is
/// then dated by the first window that shows it, however late the benchmark looks.
///
/// pw-record writes to the pipe in blocks of 4 KiB (2048 samples, 42.7 ms), each as soon as
/// it is full, so a read brings a block whose last sample was played just before it; the
/// windows before it in the block were played that much earlier. A window is dated by its
/// read's time less the duration of the samples after it in what that read completed.
/// (Dated by the read alone, every window of a block would carry the block's end: steps of
/// 42.7 ms. Dated by counting samples from the start, a graph cycle the null sink's timer
/// skips under load would shift every later date.)
final class MonitorLevels: Sendable {
    struct Window: Sendable {
        /// `monotonicNanoseconds()` when the window's last sample was played, as above.
        let playedAt: UInt64
        /// dB against a full-scale sine, one per watched tone.
        let levels: [Double]
        /// Its last sample's place in the recording, counted from the recording's start.
        let sample: UInt64
        /// Its length in samples.
        let samples: Int
    }

    /// Where a tone was heard between two times: how many windows, the first and last
    /// of them (by sample), and how much less the recording holds than the time it spans
    /// (a cycle the graph or the recorder dropped), in ms.
    struct ToneRun: Sendable {
        let windows: Int
        let first: Window?
        let last: Window?
        let recordingShortMs: Double

        /// From the first window with the tone to the last, in ms of recording (each window
        /// counted whole).
        var recordedSpanMs: Double {
            guard let first, let last else { return 0 }
            return Double(last.sample - first.sample + UInt64(first.samples)) * 1000 / Double(MonitorLevels.sampleRate)
        }

        /// How much less the recording holds between those windows than the time between
        /// them (samples the recorder or the graph dropped there), in ms; 0 under half a
        /// window, the dates' own jitter.
        var droppedInSpanMs: Double {
            guard let first, let last, last.sample > first.sample else { return 0 }
            let dated = Double(last.playedAt - min(last.playedAt, first.playedAt)) / 1e6
            let recorded = Double(last.sample - first.sample) * 1000 / Double(MonitorLevels.sampleRate)
            let dropped = dated - recorded
            return dropped >= Double(first.samples) * 500 / Double(MonitorLevels.sampleRate) ? dropped : 0
        }
    }

    static let sampleRate: UInt64 = 48000

    let tones: [Double]
    let windowSamples: Int
    private let recorder: ChildProcess
    private let pipe: Int32
    private let windows = Locked<[Window]>([])
    private let ended = Locked(false)
    /// The windows kept: the last 10 s or so.
    private static let kept = 2_000

    /// Starts recording the speakers of `pipewire` with a graph quantum of
    /// `windowSamples`, and the reading thread.
    init(pipewire: PipeWireTestSystem, tones: [Double], windowSamples: Int = 256) throws {
        self.tones = tones
        self.windowSamples = windowSamples
        (recorder, pipe) = try pipewire.monitor(latency: windowSamples)
        let thread = Thread { [self] in readLoop() }
        thread.name = "monitor-levels"
        thread.start()
    }

    /// Stops the recorder; the reading thread ends at the pipe's end and closes it.
    func stop() {
        recorder.signal(SIGTERM)
    }

    private func readLoop() {
        defer {
            close(pipe)
            ended.withLock { $0 = true }
        }
        let windowBytes = windowSamples * 2
        var pending: [UInt8] = []
        var recorded: UInt64 = 0
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(pipe, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            let now = monotonicNanoseconds()
            pending += buffer[0..<count]
            let samples = pending.count / 2
            var made: [Window] = []
            var first = 0
            while pending.count - first >= windowBytes {
                let window = stride(from: first, to: first + windowBytes, by: 2).map { index in
                    Double(Int16(bitPattern: UInt16(pending[index]) | UInt16(pending[index + 1]) << 8)) / 32768
                }
                first += windowBytes
                recorded += UInt64(windowSamples)
                let after = UInt64(samples - first / 2) * 1_000_000_000 / Self.sampleRate
                made.append(Window(playedAt: now - min(now, after),
                                   levels: tones.map { PipeWireTestSystem.toneLevel(window, hertz: $0, skipping: 0) },
                                   sample: recorded, samples: windowSamples))
            }
            pending.removeFirst(first)
            guard !made.isEmpty else { continue }
            windows.withLock { windows in
                windows += made
                if windows.count > 2 * Self.kept { windows.removeFirst(windows.count - Self.kept) }
            }
        }
    }

    /// When the first window played after `after` showed tone `tone` (an index into
    /// `tones`) at a level for which `wanted` holds; nil if none did within `timeout`.
    func first(tone: Int, after: UInt64, timeout: Duration, _ wanted: @Sendable (Double) -> Bool) async throws -> UInt64? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            try Task.checkCancellation()
            let found = windows.withLock { windows -> UInt64? in
                // Windows are in recording order, so in playing order: find the first after `after`.
                var (low, high) = (0, windows.count)
                while low < high {
                    let middle = (low + high) / 2
                    if windows[middle].playedAt > after { high = middle } else { low = middle + 1 }
                }
                return windows[low...].first { wanted($0.levels[tone]) }?.playedAt
            }
            if let found { return found }
            guard !ended.withLock({ $0 }) else { throw BenchmarkError("the monitor recorder stopped") }
            try await Task.sleep(for: .milliseconds(2))
        }
        return nil
    }

    /// How many windows played after `from` and up to `to` showed tone `tone` at a level
    /// for which `wanted` holds.
    func count(tone: Int, from: UInt64, to: UInt64, _ wanted: (Double) -> Bool) -> Int {
        windows.withLock { windows in
            windows.reduce(0) { count, window in
                count + (window.playedAt > from && window.playedAt <= to && wanted(window.levels[tone]) ? 1 : 0)
            }
        }
    }

    /// Where tone `tone` was heard at a level for which `wanted` holds, in the windows played
    /// after `from` and up to `to`, once the recording has reached `to` (at most 2 s more).
    func run(tone: Int, from: UInt64, to: UInt64, _ wanted: @Sendable (Double) -> Bool) async throws -> ToneRun {
        let deadline = ContinuousClock.now + .seconds(2)
        while windows.withLock({ ($0.last?.playedAt ?? 0) <= to }), ContinuousClock.now < deadline {
            guard !ended.withLock({ $0 }) else { throw BenchmarkError("the monitor recorder stopped") }
            try await Task.sleep(for: .milliseconds(5))
        }
        return windows.withLock { windows in
            let inside = windows.filter { $0.playedAt > from && $0.playedAt <= to }
            let heard = inside.filter { wanted($0.levels[tone]) }
            var short = 0.0
            if let first = inside.first, let last = inside.last, last.sample > first.sample {
                let spanned = Double(last.playedAt - min(last.playedAt, first.playedAt)) / 1e6
                short = max(0, spanned - Double(last.sample - first.sample) * 1000 / Double(Self.sampleRate))
            }
            return ToneRun(windows: heard.count, first: heard.first, last: heard.last, recordingShortMs: short)
        }
    }

    /// The highest level of tone `tone` in the windows played after `from` and up to `to`
    /// (-200 dB when none was).
    func peak(tone: Int, from: UInt64, to: UInt64) -> Double {
        windows.withLock { windows in
            windows.filter { $0.playedAt > from && $0.playedAt <= to }.map { $0.levels[tone] }.max() ?? -200
        }
    }

    /// Tone `tone`'s mean level in dB over the windows played in the last `duration` (of
    /// those read so far).
    func level(tone: Int, over duration: Duration) async throws -> Double {
        try await Task.sleep(for: duration)
        let since = monotonicNanoseconds() - UInt64(duration.components.seconds) * 1_000_000_000
            - UInt64(duration.components.attoseconds / 1_000_000_000)
        let levels = windows.withLock { $0.filter { $0.playedAt > since }.map { $0.levels[tone] } }
        guard !levels.isEmpty else { throw BenchmarkError("the monitor recorder delivered nothing in \(duration)") }
        // Mean of the amplitudes, in dB.
        let amplitude = levels.map { pow(10, $0 / 20) }.reduce(0, +) / Double(levels.count)
        return 20 * log10(max(amplitude, 1e-10))
    }
}
