import CSndFileLoader
import Glibc

/// Why an audio file could not be decoded.
public enum AudioFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing at `path`.
    case notFound(path: String)
    /// The file exists but cannot be opened or decoded (permissions, not WAV/Ogg/FLAC,
    /// corrupt data); `message` is libsndfile's or the system's.
    case unreadable(path: String, message: String)
    /// Longer than the decoder's limit.
    case tooLong(path: String, seconds: Double)
    /// Converting to the output rate failed.
    case resampling(path: String, message: String)

    /// The file the error is about.
    public var path: String {
        switch self {
        case .notFound(let path), .unreadable(let path, _), .tooLong(let path, _), .resampling(let path, _): path
        }
    }

    public var description: String {
        switch self {
        case .notFound(let path): "audio file '\(path)' does not exist"
        case .unreadable(let path, let message): "audio file '\(path)' cannot be read: \(message)"
        case .tooLong(let path, let seconds): "audio file '\(path)' is too long (\(Int(seconds)) s)"
        case .resampling(let path, let message): "audio file '\(path)' cannot be resampled: \(message)"
        }
    }
}

/// Audio files (WAV, Ogg Vorbis, FLAC and whatever else libsndfile reads) to mono signed
/// 16-bit samples at a chosen rate: channels are averaged, the rate converted with
/// `Resampler`. Stateless; each call opens its own file, so calls may run on any threads
/// at once.
public enum AudioFileDecoder {
    /// Files longer than this many seconds are refused (`.tooLong`).
    public static let maximumSeconds: Double = 600

    /// Decodes the file at `path` (or, when `fd` is given, the file open there, which
    /// `path` then only names in errors) into mono samples at `sampleRate` Hz.
    public static func decode(path: String, fd: Int32? = nil, sampleRate: Int) throws(AudioFileError) -> [Int16] {
        let (mono, fileRate) = try readMono(path: path, fd: fd)
        do {
            let converted = try Resampler.resample(mono, from: fileRate, to: sampleRate)
            return converted.map(Resampler.sampleFromFloat)
        } catch {
            throw .resampling(path: path, message: error.message)
        }
    }

    /// The file's samples averaged over its channels (floats, -1...1) and its rate.
    static func readMono(path: String, fd: Int32? = nil) throws(AudioFileError) -> (samples: [Float], sampleRate: Int) {
        var status = stat()
        if (fd.map { fstat($0, &status) } ?? stat(path, &status)) != 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw .notFound(path: path) }
            throw .unreadable(path: path, message: String(cString: strerror(code)))
        }
        if (status.st_mode & S_IFMT) == S_IFDIR { throw .unreadable(path: path, message: "is a directory") }

        var info = SF_INFO()
        if let fd { lseek(fd, 0, SEEK_SET) }
        let opened = fd.map { earshot_sf_open_fd($0, Int32(SFM_READ), &info, 0) } ?? earshot_sf_open(path, Int32(SFM_READ), &info)
        guard let file = opened else {
            throw .unreadable(path: path, message: String(cString: earshot_sf_strerror(nil)))
        }
        defer { earshot_sf_close(file) }
        let channels = Int(info.channels)
        guard channels > 0, info.samplerate > 0 else {
            throw .unreadable(path: path, message: "no channels or no sample rate")
        }
        let seconds = Double(info.frames) / Double(info.samplerate)
        if seconds > maximumSeconds { throw .tooLong(path: path, seconds: seconds) }

        var mono: [Float] = []
        mono.reserveCapacity(max(0, Int(info.frames)))
        let blockFrames = 4096
        var block = [Float](repeating: 0, count: blockFrames * channels)
        while true {
            let read = block.withUnsafeMutableBufferPointer { buffer in
                earshot_sf_readf_float(file, buffer.baseAddress, sf_count_t(blockFrames))
            }
            if read <= 0 { break }
            for frame in 0 ..< Int(read) {
                var sum: Float = 0
                for channel in 0 ..< channels { sum += block[frame * channels + channel] }
                mono.append(sum / Float(channels))
            }
        }
        let error = earshot_sf_error(file)
        if error != 0 {
            throw .unreadable(path: path, message: String(cString: earshot_sf_error_number(error)))
        }
        return (mono, Int(info.samplerate))
    }
}
