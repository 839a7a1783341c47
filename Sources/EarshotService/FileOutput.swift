import Glibc

/// Bytes to a file descriptor with `write(2)` until all are out (a pipe may take part of
/// them; EINTR is retried).
public enum FileOutput {
    /// Writes all of `bytes`; returns 0, or the errno that stopped it.
    @discardableResult
    public static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return written < 0 ? errno : EIO
            }
        }
        return 0
    }

    /// Writes `text` to standard error (or `fd`). Failures drop the rest: a log line must
    /// never stop a service.
    public static func write(_ text: String, to fd: Int32 = STDERR_FILENO) {
        var text = text
        _ = text.withUTF8 { writeAll(UnsafeRawBufferPointer($0), to: fd) }
    }
}
