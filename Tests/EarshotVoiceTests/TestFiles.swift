import CSndFile
import Glibc

/// Temporary files for the tests: a private directory, removed by `remove()`.
struct TestFiles {
    let directory: String

    init() {
        var template = Array("/tmp/earshot-voice-tests.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp: \(String(cString: strerror(errno)))") }
        directory = String(cString: made)
    }

    func path(_ name: String) -> String { directory + "/" + name }

    /// Writes interleaved float samples as a 16-bit PCM WAV file with libsndfile.
    func writeWAV(_ name: String, samples: [Float], channels: Int, sampleRate: Int) -> String {
        let path = path(name)
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            fatalError("sf_open \(path): \(String(cString: sf_strerror(nil)))")
        }
        let written = samples.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, sf_count_t(samples.count / channels)) }
        precondition(written == sf_count_t(samples.count / channels))
        sf_close(file)
        return path
    }

    func writeBytes(_ name: String, _ bytes: [UInt8]) -> String {
        let path = path(name)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        precondition(fd >= 0)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        return path
    }

    func readBytes(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            result += buffer[0 ..< count]
        }
        return result
    }

    /// Removes the directory and the files in it.
    func remove() {
        guard let handle = opendir(directory) else { return }
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name != "." && name != ".." { unlink(path(name)) }
        }
        closedir(handle)
        rmdir(directory)
    }
}
