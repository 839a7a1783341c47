import CallerFiles
import ContractCore
import Dispatch
import EarshotDBus
import Glibc

/// A pass-thru's audio written to `OutputPath` as a WAV file: created with the caller's
/// permissions, the samples appended as they are captured (off the capturing thread), the
/// header's sizes written at the end, whatever the end.
final class WaveOutput: Sendable {
    let path: String
    /// The descriptor; owned by `queue` once the file is started.
    private let fd: Int32
    private let created: Bool
    private let queue = DispatchQueue(label: "earshot-capture.wave-output")
    private let format: (rate: UInt32, channels: UInt32, bits: UInt32)
    /// Bytes of samples written, and the first write error.
    private let written = Locked<(bytes: UInt64, error: String?)>((0, nil))

    /// Opens (or creates) `path` as the user `uid` would (`CallerFiles`), for the call from
    /// `caller` (its unique bus name): the kernel decides with that user's identity, and a
    /// file made belongs to that user. Nothing is truncated yet.
    init(path: String, uid: UInt32, caller: String, rate: UInt32, channels: UInt32, bitsPerSample: UInt32) throws(DBusError) {
        self.path = path
        format = (rate, channels, bitsPerSample)
        var opened = CallerFiles.open(path, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o644, as: uid_t(uid), caller: caller)
        var created = true
        if case .failure(let error) = opened, error.code == EEXIST {
            created = false
            opened = CallerFiles.open(path, flags: O_WRONLY | O_NOFOLLOW, as: uid_t(uid), caller: caller)
        }
        switch opened {
        case .success(let fd):
            self.fd = fd
        case .failure(let error) where error.isDenied:
            throw .accessDenied("\(EarshotField.outputPath.name): uid \(uid) may not write \(path): \(error)")
        case .failure(let error):
            throw .earshot(.invalidData, "\(EarshotField.outputPath.name): cannot create \(path): \(error)")
        }
        self.created = created
    }

    /// Empties the file and writes a header that counts no samples yet.
    func start() {
        let header = PCMWave.header(sampleRate: format.rate, channels: format.channels, bitsPerSample: format.bits, dataBytes: 0)
        queue.async { [fd] in
            _ = ftruncate(fd, 0)
            self.write(header, at: 0)
        }
    }

    /// Gives up before `start`: closes, and removes the file if this made it.
    func abandon() {
        close(fd)
        if created { unlink(path) }
    }

    /// Appends captured samples (in the background).
    func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        queue.async {
            let (written, failed) = self.written.withLock { ($0.bytes, $0.error != nil) }
            guard !failed else { return }  // the file stays as far as it got
            let offset = UInt64(PCMWave.headerSize) + written
            if self.write(bytes, at: offset) { self.written.withLock { $0.bytes += UInt64(bytes.count) } }
        }
    }

    /// Writes the header's sizes (and RIFF's padding byte), flushes to disk and closes,
    /// once everything appended is written. Returns the first write error, if any.
    func finish() -> String? {
        queue.sync {
            let bytes = written.withLock { $0.bytes }
            if bytes % 2 == 1 { write([0], at: UInt64(PCMWave.headerSize) + bytes) }
            write(PCMWave.header(sampleRate: format.rate, channels: format.channels, bitsPerSample: format.bits, dataBytes: bytes), at: 0)
            if fsync(fd) != 0 { record("fsync: \(String(cString: strerror(errno)))") }
            close(fd)
            return written.withLock { $0.error }
        }
    }

    /// On `queue`.
    @discardableResult
    private func write(_ bytes: [UInt8], at offset: UInt64) -> Bool {
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                record(String(cString: strerror(errno)))
                return false
            }
            done += count
        }
        return true
    }

    private func record(_ error: String) {
        written.withLock { if $0.error == nil { $0.error = "\(path): \(error)" } }
    }
}
