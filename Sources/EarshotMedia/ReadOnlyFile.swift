import Glibc

/// A file open for reading by descriptor; closed when the value ends.
struct ReadOnlyFile: ~Copyable {
    let path: String
    private let descriptor: Int32

    init(path: String) throws(MediaError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .system("cannot open '\(path)'", code: errno) }
        var status = stat()
        if fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR {
            close(descriptor)
            throw .io("'\(path)' is a directory")
        }
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Reads up to `buffer.count` bytes into `buffer`, fewer only at the end of the file;
    /// returns the count (0 at the end).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(MediaError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var filled = 0
        while filled < buffer.count {
            let count = Glibc.read(descriptor, base + filled, buffer.count - filled)
            if count > 0 {
                filled += count
            } else if count == 0 {
                break
            } else if errno != EINTR {
                throw .system("cannot read '\(path)'", code: errno)
            }
        }
        return filled
    }
}
