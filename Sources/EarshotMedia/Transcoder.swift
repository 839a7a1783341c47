import EarshotSync
import Glibc

/// Converts audio the contract accepts into any of its four formats.
public enum Transcoder {
    /// Decodes `input` (any file `AudioAnalyzer` accepts) and writes `output` in `format`,
    /// keeping the sample rate and channel count:
    /// - `.wave`: 16-bit PCM WAV (a 16-bit source's samples are kept exactly; deeper or float
    ///   sources are rounded to 16 bits, clipped, without dither);
    /// - `.flac`: 16-bit FLAC, the same samples as `.wave`;
    /// - `.oggVorbis`: Ogg Vorbis through libsndfile at VBR quality 0.4 (libvorbis -q 4);
    /// - `.aacM4A`: AAC-LC in M4A through FFmpeg's native encoder (in a plugin loaded at the
    ///   first use, `AACEncoderPlugin`), 96 kb/s for mono and
    ///   64 kb/s per channel otherwise; a rate AAC cannot encode (anything but 7350, 8000,
    ///   11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000 Hz) is
    ///   resampled to 48000 Hz.
    ///
    /// Streams in chunks, never holding the whole file. Writes `output` directly (creating or
    /// truncating it); on a failure after it has opened `output`, removes it. Throws
    /// `.invalidAudio` for a source `AudioAnalyzer` would refuse, that fails to decode
    /// part-way, or that the target format cannot encode (Vorbis above 200 kHz); `.io` when
    /// reading or writing fails, `output` is `input`, or the AAC plugin cannot be loaded.
    public static func transcode(from input: String, to output: String, format: MediaFormat) throws(MediaError) {
        try refuseSameFile(input, output)
        let reader = try SoundFileReader(path: input)
        switch format {
        case .wave, .flac:
            try writePCM16(reader, to: output, format: format)
        case .oggVorbis:
            try writeVorbis(reader, to: output)
        case .aacM4A:
            // The C encoder reads the file itself; the reader has done its checking.
            _ = consume reader
            try writeAAC(from: input, to: output)
        }
    }

    private static func writePCM16(_ reader: borrowing SoundFileReader, to output: String, format: MediaFormat) throws(MediaError) {
        var writer = try SoundFileWriter(path: output, format: format, sampleRate: reader.sampleRate, channels: reader.channels)
        let shorts = UnsafeMutableBufferPointer<Int16>.allocate(capacity: SoundFileReader.chunkFrames * Int(reader.channels))
        defer { shorts.deallocate() }
        do throws(MediaError) {
            _ = try reader.forEachChunk { samples, frames throws(MediaError) in
                for index in samples.indices {
                    shorts[index] = pcm16(samples[index])
                }
                try writer.write(UnsafeBufferPointer(rebasing: shorts[0 ..< samples.count]), frames: frames)
            }
            try writer.finish()
        } catch {
            unlink(output)
            throw error
        }
    }

    private static func writeVorbis(_ reader: borrowing SoundFileReader, to output: String) throws(MediaError) {
        var writer = try SoundFileWriter(path: output, format: .oggVorbis, sampleRate: reader.sampleRate, channels: reader.channels)
        do throws(MediaError) {
            _ = try reader.forEachChunk { samples, frames throws(MediaError) in
                try writer.write(samples, frames: frames)
            }
            try writer.finish()
        } catch {
            unlink(output)
            throw error
        }
    }

    private static func writeAAC(from input: String, to output: String) throws(MediaError) {
        let encode = try AACEncoderPlugin.encoder()
        var message = [CChar](repeating: 0, count: 512)
        let status = encode(input, output, &message, message.count)
        guard status != AACEncoderPlugin.Status.ok.rawValue else { return }
        let text = String(nulTerminated: message)
        if status == AACEncoderPlugin.Status.invalidAudio.rawValue {
            throw .invalidAudio("cannot encode '\(input)' as AAC: \(text)")
        }
        throw .io("cannot write '\(output)' as AAC in M4A: \(text)")
    }

    /// A float sample (full scale ±1) as 16-bit PCM: scaled by 32768 (the inverse of
    /// libsndfile's reading, so 16-bit sources come back unchanged), rounded, clipped.
    static func pcm16(_ sample: Float) -> Int16 {
        let scaled = (sample * 32768).rounded()
        if scaled >= 32767 { return 32767 }
        if scaled <= -32768 { return -32768 }
        if scaled.isNaN { return 0 }
        return Int16(scaled)
    }

    /// Throws if `output` already exists and is the same file as `input`.
    private static func refuseSameFile(_ input: String, _ output: String) throws(MediaError) {
        var inputStatus = stat()
        var outputStatus = stat()
        guard stat(input, &inputStatus) == 0, stat(output, &outputStatus) == 0 else { return }
        if inputStatus.st_dev == outputStatus.st_dev && inputStatus.st_ino == outputStatus.st_ino {
            throw .io("the output '\(output)' is the input file")
        }
    }
}
