import CSndFileLoader
import Glibc

/// An audio file open for reading through libsndfile, checked to be a source the contract
/// accepts: WAV (RIFF, WAVEX or RF64; PCM or float), Ogg Vorbis or FLAC, 1 to 8 channels,
/// 8 to 384 kHz, at least one frame.
struct SoundFileReader: ~Copyable {
    /// Frames decoded per libsndfile call by `forEachChunk`.
    static let chunkFrames = 65_536
    static let channelRange: ClosedRange<Int32> = 1 ... 8
    static let sampleRateRange: ClosedRange<Int32> = 8_000 ... 384_000

    let format: MediaFormat
    let sampleRate: UInt32
    let channels: UInt32
    /// The frame count libsndfile read from the headers (`Int64.max` if unknown).
    let declaredFrames: Int64
    private let handle: OpaquePointer
    private let descriptor: Int32

    init(path: String) throws(MediaError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .system("cannot open '\(path)'", code: errno) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            close(descriptor)
            throw .system("cannot examine '\(path)'", code: code)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw .io("'\(path)' is not a regular file")
        }
        var info = SF_INFO()
        // libsndfile does not close the descriptor (SF_FALSE); deinit does, after sf_close.
        let opened = LibsndfileOpen.run { earshot_sf_open_fd(descriptor, Int32(SFM_READ), &info, Int32(SF_FALSE)) }
        let handle: OpaquePointer
        switch opened {
        case .success(let opened): handle = opened
        case .failure(let failure):
            close(descriptor)
            throw .invalidAudio("'\(path)' is not a WAV, Ogg Vorbis or FLAC file (libsndfile: \(failure.text))")
        }
        let format: MediaFormat
        do throws(MediaError) {
            format = try Self.check(info, path: path)
        } catch {
            earshot_sf_close(handle)
            close(descriptor)
            throw error
        }
        self.format = format
        self.handle = handle
        self.descriptor = descriptor
        sampleRate = UInt32(info.samplerate)
        channels = UInt32(info.channels)
        declaredFrames = info.frames
    }

    /// The contract's name for the file's format, if the contract accepts the file.
    private static func check(_ info: SF_INFO, path: String) throws(MediaError) -> MediaFormat {
        guard let format = acceptedFormat(info.format) else {
            throw .invalidAudio("'\(path)' is \(describe(info.format)); only WAV (PCM or float), Ogg Vorbis and FLAC are accepted")
        }
        guard channelRange.contains(info.channels) else {
            throw .invalidAudio("'\(path)' has \(info.channels) channels; 1 to 8 are accepted")
        }
        guard sampleRateRange.contains(info.samplerate) else {
            throw .invalidAudio("'\(path)' has a sample rate of \(info.samplerate) Hz; 8000 to 384000 Hz are accepted")
        }
        guard info.frames > 0 else {
            throw .invalidAudio("'\(path)' has no audio frames")
        }
        return format
    }

    deinit {
        earshot_sf_close(handle)
        close(descriptor)
    }

    /// Decodes every frame, `chunkFrames` at a time, handing `body` the interleaved float
    /// samples (full scale ±1) and the chunk's frame count. Returns the frames decoded.
    /// Throws `.invalidAudio` if decoding fails or stops before the frames the headers
    /// declare, or if nothing at all decodes.
    func forEachChunk(
        _ body: (_ samples: UnsafeBufferPointer<Float>, _ frames: Int) throws(MediaError) -> Void
    ) throws(MediaError) -> UInt64 {
        let channelCount = Int(channels)
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: Self.chunkFrames * channelCount)
        defer { buffer.deallocate() }
        var decoded: Int64 = 0
        while true {
            let got = read(into: buffer)
            if got == 0 { break }
            decoded += Int64(got)
            try body(UnsafeBufferPointer(rebasing: buffer[0 ..< got * channelCount]), got)
        }
        return try checkEnd(decoded: decoded)
    }

    /// Decodes the next frames into `buffer` as interleaved float samples (full scale ±1),
    /// as many whole frames as it holds; returns how many, 0 at the end of the audio or if
    /// decoding fails (`checkEnd` tells which).
    func read(into buffer: UnsafeMutableBufferPointer<Float>) -> Int {
        let capacity = buffer.count / Int(channels)
        guard capacity > 0 else { return 0 }
        let got = earshot_sf_readf_float(handle, buffer.baseAddress, sf_count_t(capacity))
        return got > 0 ? Int(got) : 0
    }

    /// Checks how decoding ended once `read` returned 0 after `decoded` frames in all, and
    /// returns the frame count. Throws `.invalidAudio` if decoding failed or stopped before
    /// the frames the headers declare, or if nothing at all decoded.
    func checkEnd(decoded: Int64) throws(MediaError) -> UInt64 {
        if earshot_sf_error(handle) != Int32(SF_ERR_NO_ERROR) {
            throw .invalidAudio("decoding failed after \(decoded) frames (libsndfile: \(String(cString: earshot_sf_strerror(handle))))")
        }
        if declaredFrames != Int64.max && decoded < declaredFrames {
            throw .invalidAudio("decoding stopped after \(decoded) of \(declaredFrames) frames")
        }
        if decoded == 0 {
            throw .invalidAudio("no audio frames decode")
        }
        return UInt64(decoded)
    }

    /// The contract's name for a libsndfile format, if the contract accepts it as a source.
    static func acceptedFormat(_ format: Int32) -> MediaFormat? {
        let major = Int(format) & SF_FORMAT_TYPEMASK
        let subtype = Int(format) & SF_FORMAT_SUBMASK
        switch major {
        case SF_FORMAT_WAV, SF_FORMAT_WAVEX, SF_FORMAT_RF64:
            let samples = [SF_FORMAT_PCM_U8, SF_FORMAT_PCM_S8, SF_FORMAT_PCM_16, SF_FORMAT_PCM_24,
                           SF_FORMAT_PCM_32, SF_FORMAT_FLOAT, SF_FORMAT_DOUBLE]
            return samples.contains(subtype) ? .wave : nil
        case SF_FORMAT_OGG:
            return subtype == SF_FORMAT_VORBIS ? .oggVorbis : nil
        case SF_FORMAT_FLAC:
            return [SF_FORMAT_PCM_S8, SF_FORMAT_PCM_16, SF_FORMAT_PCM_24].contains(subtype) ? .flac : nil
        default:
            return nil
        }
    }

    /// "AIFF (Apple/SGI) audio with Signed 16 bit PCM samples", in libsndfile's words.
    static func describe(_ format: Int32) -> String {
        let major = name(of: Int(format) & SF_FORMAT_TYPEMASK) ?? "an unknown kind of"
        let subtype = name(of: Int(format) & SF_FORMAT_SUBMASK) ?? "unknown"
        return "\(major) audio with \(subtype) samples"
    }

    private static func name(of format: Int) -> String? {
        var info = SF_FORMAT_INFO()
        info.format = Int32(format)
        let size = Int32(MemoryLayout<SF_FORMAT_INFO>.size)
        guard earshot_sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &info, size) == 0, let name = info.name else { return nil }
        return String(cString: name)
    }
}
