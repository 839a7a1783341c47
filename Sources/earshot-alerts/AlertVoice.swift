import AlertsCore
import ContractCore
import Dispatch
import EarshotALSA
import EarshotDBus
import EarshotService
import EarshotVoice
import Glibc
import Logging

/// The alert voice on ALSA: each alert's parts are rendered one after another on a
/// rendering queue (espeak-ng, jingles, files) and written by a `PlaybackStream` on its own
/// thread, which starts on the first part while the rest are still being rendered.
final class AlertVoice: AlertAudioOutput {
    let device: String
    let sampleRate: UInt32
    let bufferMilliseconds: UInt32
    let pacing: PlaybackPacing
    private let renderer: AlertAudioRenderer
    private let rendering = DispatchQueue(label: "earshot-alerts.rendering")

    init(device: String, sampleRate: UInt32, bufferMilliseconds: UInt32, pacing: PlaybackPacing) throws {
        self.device = device
        self.sampleRate = sampleRate
        self.bufferMilliseconds = bufferMilliseconds
        self.pacing = pacing
        renderer = AlertAudioRenderer(sampleRate: Int(sampleRate))
    }

    static let renderAheadSeconds = 4

    /// Returns at once: opening the PCM, rendering and writing all happen off the caller's
    /// thread (the caller holds the service's lock).
    func play(alert id: UInt64, chunks: [SpeechChunk], files: [String: UnixFD], tone: Bool, role: String,
              playedAudio: UnixFD?, logger: Logger,
              after ready: @escaping @Sendable () async -> Void,
              started: @escaping @Sendable (UInt64) -> Void,
              playedOut: @escaping @Sendable (UInt64) -> Void,
              ended: @escaping @Sendable ([String]) -> Void) -> any AlertPlayback {
        let playback = VoicePlayback(ended: ended)
        let presentedUs = monotonicMicroseconds()
        let (device, format, pacing, renderer) = (device, PCMFormat(sampleRate: sampleRate, channels: 1, bitsPerSample: 16), pacing, renderer)
        let bufferMilliseconds = bufferMilliseconds
        let rendering = rendering
        Task {
            await ready()
            rendering.async { Self.render(id, playback: playback, presentedUs: presentedUs, device: device, role: role, files: files, format: format,
                                          bufferMilliseconds: bufferMilliseconds, pacing: pacing, renderer: renderer, chunks: chunks, tone: tone,
                                          playedAudio: playedAudio, logger: logger, started: started, playedOut: playedOut) }
        }
        return playback
    }

    /// Opens the PCM and renders and writes the alert's audio; on the rendering queue.
    private static func render(_ id: UInt64, playback: VoicePlayback, presentedUs: UInt64, device named: String, role: String,
                               files: [String: UnixFD], format: PCMFormat, bufferMilliseconds: UInt32, pacing: PlaybackPacing, renderer: AlertAudioRenderer, chunks: [SpeechChunk],
                               tone: Bool, playedAudio: UnixFD?, logger: Logger, started: @escaping @Sendable (UInt64) -> Void,
                               playedOut: @Sendable (UInt64) -> Void) {
        // What is handed to the output goes to the caller's pipe too, frame for frame; the
        // pipe closes (EOF) however this ends, after its backlog once everything is handed over.
        var tap = playedAudio?.take().map(StreamPipe.init(adopting:))
        tap?.write(PCMWave.streamHeader(sampleRate: format.sampleRate, channels: 1, bitsPerSample: 16))
        var tapHandedOver = false
        defer { if !tapHandedOver { tap?.close() } }
        guard !playback.isStopped else { return }
        // The role goes with the audio wherever the PCM leads to PipeWire (read here, where
        // ALSA's configuration is read).
        let definition = PCMDefinition.of(named)
        let device = AlertOutputDevice.name(for: named, role: role, type: definition?.type, fields: definition?.fields ?? [:])
        let stream: PlaybackStream
        do {
            stream = try PlaybackStream(device: device, format: format, bufferMilliseconds: bufferMilliseconds, pacing: pacing)
        } catch {
            logger.error("alert \(id): cannot play on \(device): \(error)")
            playback.warn("audio: cannot play on \(device): \(error)")
            playback.end()
            return
        }
        guard playback.attach(stream) else {
            stream.stop()
            return
        }
        let firstFrameUs = Locked<UInt64?>(nil)
        stream.start(onFirstFrame: { writtenUs in
            firstFrameUs.withLock { $0 = writtenUs }
            started(writtenUs)
            let tenthsMs = (writtenUs &- presentedUs &+ 50) / 100
            logger.info("alert \(id): first audio frame written \(tenthsMs / 10).\(tenthsMs % 10) ms after presentation")
        }, onEnd: { error in
            if let error {
                logger.error("alert \(id): playback failed: \(error)")
                playback.warn("audio: playback failed: \(error)")
            }
            playback.end()
        })
        // Rendering runs at most a few seconds ahead of playback, so a long alert
        // holds little audio in memory. Its end is told as soon as it is known: when the
        // rendering has to wait with parts still to come, those are rendered once more to
        // be counted, not kept (deterministic: the same frames later), so a refusal behind
        // it is exact from the first moment whatever the alert's length.
        let ahead = Int(format.sampleRate) * Self.renderAheadSeconds
        let parts = Array(AlertAudioRenderer.parts(of: chunks, playTone: tone))
        let fileDescriptors = files.compactMapValues(\.rawValue)
        var frames: UInt64 = 0
        var told = false
        func tellEnd(_ total: UInt64) {
            for _ in 0..<400 where !playback.isStopped {
                if let first = firstFrameUs.withLock({ $0 }) {
                    let latency = UInt64(stream.latencyFrames ?? 0)
                    playedOut(first + (total + latency) * 1_000_000 / UInt64(format.sampleRate))
                    return
                }
                usleep(5_000)
            }
        }
        for (index, part) in parts.enumerated() {
            if stream.pendingFrames > ahead, !told {
                let rest = parts[index...].reduce(UInt64(0)) { sum, later in
                    sum + UInt64((try? renderer.render(later, files: fileDescriptors))?.count ?? 0)
                }
                tellEnd(frames + rest)
                told = true
            }
            while stream.pendingFrames > ahead && !playback.isStopped { usleep(20_000) }
            guard !playback.isStopped else { return }
            do {
                let samples = try renderer.render(part, files: fileDescriptors)
                if stream.enqueue(samples) {
                    frames += UInt64(samples.count)  // mono
                    tap?.write(PCMWave.bytes(samples))
                }
            } catch {
                logger.warning("alert \(id): \(error); skipped")
                playback.warn("audio: \(error); skipped")
            }
        }
        // Everything is rendered: its end can be predicted once the first frames are out (at
        // once, but for a slow device), with the device's own latency; told before `finish`,
        // so before the stream can end. The alert itself ends when the stream has drained.
        if !told { tellEnd(frames) }
        stream.finish()
        if var rest = tap {
            tapHandedOver = true
            Task { await rest.finish() }
        }
    }
}

/// One alert's audio: the stream, the warnings, and whether `ended` may still be called.
final class VoicePlayback: AlertPlayback {
    private struct State {
        var stream: PlaybackStream?
        var warnings: [String] = []
        var stopped = false
        var ended = false
    }

    private let state = Locked(State())
    private let ended: @Sendable ([String]) -> Void

    init(ended: @escaping @Sendable ([String]) -> Void) {
        self.ended = ended
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    /// Hands over the stream to stop; false (and not kept) when already stopped.
    func attach(_ stream: PlaybackStream) -> Bool {
        state.withLock { s in
            guard !s.stopped else { return false }
            s.stream = stream
            return true
        }
    }

    func warn(_ warning: String) {
        state.withLock { $0.warnings.append(warning) }
    }

    /// The audio has played out (or failed): report once, unless stopped.
    func end() {
        let warnings = state.withLock { s -> [String]? in
            guard !s.stopped, !s.ended else { return nil }
            s.ended = true
            return s.warnings
        }
        if let warnings { ended(warnings) }
    }

    func stop() {
        let stream = state.withLock { s -> PlaybackStream? in
            s.stopped = true
            return s.stream
        }
        stream?.stop()
    }
}
