import CSndFileLoader

/// An audio file being written through libsndfile: 16-bit PCM WAV, 16-bit FLAC, or Ogg
/// Vorbis at `vorbisQuality`.
struct SoundFileWriter: ~Copyable {
    /// libsndfile's VBR quality for Vorbis (0 to 1): 0.3 is libvorbis's -q 3 (about
    /// 112 kb/s for 44.1 kHz stereo), the default of FFmpeg's libvorbis encoder.
    static let vorbisQuality = 0.3

    /// Open until `finish()`.
    private var handle: OpaquePointer?
    private let path: String
    /// "Ogg Vorbis at 384000 Hz with 2 channels", for messages.
    private let shape: String

    /// Creates (or truncates) `path`. `format` is `.wave`, `.flac` or `.oggVorbis`.
    init(path: String, format: MediaFormat, sampleRate: UInt32, channels: UInt32) throws(MediaError) {
        var info = SF_INFO()
        info.samplerate = Int32(clamping: sampleRate)
        info.channels = Int32(clamping: channels)
        let name: String
        switch format {
        case .wave: (info.format, name) = (Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16), "16-bit WAV")
        case .flac: (info.format, name) = (Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), "16-bit FLAC")
        case .oggVorbis: (info.format, name) = (Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS), "Ogg Vorbis")
        case .aacM4A: preconditionFailure("AAC is written by the FFmpeg encoder, not libsndfile")
        }
        let shape = "\(name) at \(sampleRate) Hz with \(channels) channel\(channels == 1 ? "" : "s")"
        guard earshot_sf_format_check(&info) == Int32(SF_TRUE) else {
            throw .invalidAudio("libsndfile cannot write \(shape)")
        }
        let handle: OpaquePointer
        switch LibsndfileOpen.run({ earshot_sf_open(path, Int32(SFM_WRITE), &info) }) {
        case .success(let opened): handle = opened
        case .failure(let failure): throw .io("cannot create '\(path)' (libsndfile: \(failure.text))")
        }
        if format == .oggVorbis {
            var quality = Self.vorbisQuality
            let set = earshot_sf_command(handle, Int32(SFC_SET_VBR_ENCODING_QUALITY), &quality, Int32(MemoryLayout<Double>.size))
            guard set == Int32(SF_TRUE) else {
                earshot_sf_close(handle)
                throw .io("libsndfile refuses Vorbis quality \(quality) for '\(path)'")
            }
        }
        self.handle = handle
        self.path = path
        self.shape = shape
    }

    deinit {
        if let handle { earshot_sf_close(handle) }
    }

    /// Appends `frames` frames of interleaved 16-bit samples.
    func write(_ samples: UnsafeBufferPointer<Int16>, frames: Int) throws(MediaError) {
        let written = earshot_sf_writef_short(handle, samples.baseAddress, sf_count_t(frames))
        try check(written: written, of: frames)
    }

    /// Appends `frames` frames of interleaved float samples (full scale ±1).
    func write(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(MediaError) {
        let written = earshot_sf_writef_float(handle, samples.baseAddress, sf_count_t(frames))
        try check(written: written, of: frames)
    }

    /// Finishes the file (FLAC and Vorbis flush their last blocks here) and closes it; the
    /// writer takes no more samples after this.
    mutating func finish() throws(MediaError) {
        guard let handle else { return }
        self.handle = nil
        let result = earshot_sf_close(handle)
        guard result == 0 else {
            throw .io("cannot finish '\(path)' (libsndfile: \(String(cString: earshot_sf_error_number(result))))")
        }
    }

    private func check(written: sf_count_t, of frames: Int) throws(MediaError) {
        guard written != sf_count_t(frames) else { return }
        let message = String(cString: earshot_sf_strerror(handle))
        // libsndfile sets up the encoder (libvorbis's, for one) on the first write and reports
        // an encoder that refuses the rate or channel count as an unrecognised format.
        if earshot_sf_error(handle) == Int32(SF_ERR_UNRECOGNISED_FORMAT) {
            throw .invalidAudio("libsndfile cannot encode \(shape) (libsndfile: \(message))")
        }
        throw .io("cannot write '\(path)' (libsndfile: \(message))")
    }
}
