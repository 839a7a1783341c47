/// Whole-file analysis of the audio the contract accepts.
public enum AudioAnalyzer {
    /// Opens `path` with libsndfile, accepts only WAV (RIFF, WAVEX or RF64; PCM or float),
    /// Ogg Vorbis or FLAC, decodes every frame in chunks of 64 Ki frames feeding libebur128
    /// (integrated loudness and true peak), and counts the frames actually decoded.
    ///
    /// Throws `.invalidAudio` for a file of another format, with no frames, that fails to
    /// decode part-way, or with more than 8 channels or a rate outside 8000...384000 Hz;
    /// `.io` if the file cannot be opened.
    public static func analyze(path: String) throws(MediaError) -> AudioAnalysis {
        let reader = try SoundFileReader(path: path)
        let meter = try LoudnessMeter(channels: reader.channels, sampleRate: reader.sampleRate)
        let frames = try reader.forEachChunk { samples, frames throws(MediaError) in
            try meter.add(samples, frames: frames)
        }
        return AudioAnalysis(format: reader.format, sampleRate: reader.sampleRate, channels: reader.channels,
                             frames: frames, loudnessLufs: meter.integratedLoudness,
                             truePeakDbtp: meter.truePeakDbtp)
    }
}
