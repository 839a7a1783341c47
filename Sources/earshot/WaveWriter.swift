import ContractCore
import Glibc

/// A PCM WAV file written as the audio arrives: a header whose sizes are filled in by
/// `finish`, then the samples as they came (8-bit unsigned or 16-bit signed
/// little-endian, interleaved).
final class WaveWriter {
    let path: String
    private var fd: Int32
    private(set) var dataBytes: UInt64 = 0
    static let headerSize = PCMWave.headerSize

    /// Creates (or truncates) `path` and reserves the header.
    init(path: String) throws(ClientFailure) {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .posix("cannot create \(path)") }
        try write([UInt8](repeating: 0, count: Self.headerSize))
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Appends interleaved samples.
    func append(_ samples: [UInt8]) throws(ClientFailure) {
        try write(samples)
        dataBytes += UInt64(samples.count)
    }

    /// Writes the header for what was appended, pads the data to an even length as RIFF
    /// wants, and closes the file.
    func finish(sampleRate: UInt32, bitsPerSample: UInt32, channels: UInt32) throws(ClientFailure) {
        if dataBytes % 2 == 1 { try write([0]) }
        let header = PCMWave.header(sampleRate: sampleRate, channels: channels, bitsPerSample: bitsPerSample, dataBytes: dataBytes)
        let written = header.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == header.count else { throw .posix("cannot write the WAV header of \(path)") }
        guard close(fd) == 0 else {
            fd = -1
            throw .posix("cannot close \(path)")
        }
        fd = -1
    }

    /// Closes and removes the file (the capture never started).
    func discard() {
        if fd >= 0 { close(fd) }
        fd = -1
        unlink(path)
    }

    private func write(_ bytes: [UInt8]) throws(ClientFailure) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .posix("cannot write \(path)")
            }
            offset += count
        }
    }
}
