import CTruePeak
import EarshotSync

/// Whole-file analysis of the audio the contract accepts.
public enum AudioAnalyzer {
    /// Opens `path` with libsndfile, accepts only WAV (RIFF, WAVEX or RF64; PCM or float),
    /// Ogg Vorbis or FLAC, decodes every frame in chunks, and counts the frames actually
    /// decoded. Measures, at the same time on two threads, the integrated loudness
    /// (libebur128, on the calling thread, which also decodes) and the true peak (each
    /// channel oversampled by a polyphase interpolator; see `TruePeakMeter`).
    ///
    /// Throws `.invalidAudio` for a file of another format, with no frames, that fails to
    /// decode part-way, or with more than 8 channels or a rate outside 8000...384000 Hz;
    /// `.io` if the file cannot be opened.
    public static func analyze(path: String) throws(MediaError) -> AudioAnalysis {
        try analyze(path: path, concurrently: true)
    }

    /// `analyze(path:)`, with the true peak measured on a second thread, or (without
    /// `concurrently`, or if no thread can be started) chunk by chunk on the calling one.
    static func analyze(path: String, concurrently: Bool) throws(MediaError) -> AudioAnalysis {
        let reader = try SoundFileReader(path: path)
        let loudness = try LoudnessMeter(channels: reader.channels, sampleRate: reader.sampleRate)
        let measured: (frames: UInt64, truePeakDbtp: Double)
        if concurrently, let concurrent = try measureConcurrently(reader, loudness: loudness) {
            measured = concurrent
        } else {
            measured = try measureSequentially(reader, loudness: loudness)
        }
        return AudioAnalysis(format: reader.format, sampleRate: reader.sampleRate, channels: reader.channels,
                             frames: measured.frames, loudnessLufs: loudness.integratedLoudness,
                             truePeakDbtp: measured.truePeakDbtp)
    }

    /// The integrated loudness and the highest true peak of the file at `path`, measured
    /// the way `analyze` used to, with libebur128 alone (`EBUR128_MODE_I |
    /// EBUR128_MODE_TRUE_PEAK`, libebur128's own, several times slower, interpolator): the
    /// reference `analyze`'s measurements are checked against.
    static func referenceMeasurement(path: String) throws(MediaError) -> (loudnessLufs: Double, truePeakDbtp: Double) {
        let reader = try SoundFileReader(path: path)
        let meter = try LoudnessMeter(channels: reader.channels, sampleRate: reader.sampleRate,
                                      measuring: .loudnessAndTruePeak)
        _ = try reader.forEachChunk { samples, frames throws(MediaError) in
            try meter.add(samples, frames: frames)
        }
        return (meter.integratedLoudness, meter.truePeakDbtp)
    }

    /// Decodes on this thread, feeding `loudness`, and hands every chunk to a second thread
    /// measuring the true peak. Returns nil, having decoded nothing, if the second thread
    /// cannot be started.
    private static func measureConcurrently(
        _ reader: borrowing SoundFileReader, loudness: borrowing LoudnessMeter
    ) throws(MediaError) -> (frames: UInt64, truePeakDbtp: Double)? {
        let channels = reader.channels
        let sampleRate = reader.sampleRate
        let relay = ChunkRelay(channels: Int(channels))
        guard let thread = JoinableThread(name: "earshot-peak", {
            measureTruePeak(relay, channels: channels, sampleRate: sampleRate)
        }) else { return nil }

        var decoded: Int64 = 0
        var reachedEnd = false
        var failure: MediaError?
        do throws(MediaError) {
            while let index = relay.acquire() {
                let got = reader.read(into: relay.buffer(index))
                if got == 0 {
                    relay.giveBack(index)
                    reachedEnd = true
                    break
                }
                decoded += Int64(got)
                relay.publish(index, frames: got)
                defer { relay.release(index) }
                try loudness.add(relay.samples(index, frames: got), frames: got)
            }
        } catch {
            failure = error
        }
        if failure == nil { relay.end() } else { relay.cancel() }
        thread.join()

        if let failure { throw failure }
        guard let outcome = relay.truePeakOutcome else {
            throw .io("the true-peak thread ended without a result")
        }
        // Without reaching the end, decoding stopped because the true-peak thread failed.
        if !reachedEnd, case .failure(let error) = outcome { throw error }
        let frames = try reader.checkEnd(decoded: decoded)
        return (frames, try outcome.get())
    }

    /// The true-peak thread: measures the relay's chunks until they end, and reports.
    private static func measureTruePeak(_ relay: ChunkRelay, channels: UInt32, sampleRate: UInt32) {
        let outcome: Result<Double, MediaError>
        do throws(MediaError) {
            let meter = try TruePeakMeter(channels: channels, sampleRate: sampleRate)
            while let chunk = relay.next() {
                defer { relay.release(chunk.buffer) }
                try meter.add(relay.samples(chunk.buffer, frames: chunk.frames), frames: chunk.frames)
            }
            try meter.finish()
            outcome = .success(meter.truePeakDbtp)
        } catch {
            outcome = .failure(error)
        }
        relay.report(outcome)
    }

    /// Decodes on this thread, feeding both meters chunk by chunk.
    private static func measureSequentially(
        _ reader: borrowing SoundFileReader, loudness: borrowing LoudnessMeter
    ) throws(MediaError) -> (frames: UInt64, truePeakDbtp: Double) {
        let truePeak = try TruePeakMeter(channels: reader.channels, sampleRate: reader.sampleRate)
        let frames = try reader.forEachChunk { samples, frames throws(MediaError) in
            try loudness.add(samples, frames: frames)
            try truePeak.add(samples, frames: frames)
        }
        try truePeak.finish()
        return (frames, truePeak.truePeakDbtp)
    }
}
