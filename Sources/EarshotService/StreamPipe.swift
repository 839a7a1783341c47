import EarshotDBus
import Glibc

/// The writing end of a pipe a service streams audio into (capture's `OpenStream`, the
/// alerts' `PlayedAudio`). Writes never block the writing thread: what the reader has not
/// taken yet waits here, up to `limit` bytes; a reader that falls further behind, or goes
/// away, loses the stream (its end sees EOF).
public struct StreamPipe: Sendable {
    public let writer: Int32
    public private(set) var backlog: [UInt8] = []
    public private(set) var closed = false
    public static let limit = 8 << 20

    /// Makes a pipe; returns the reading end (for the caller) and this writing end.
    public static func make() throws(DBusError) -> (reader: UnixFD, pipe: StreamPipe) {
        var ends: [Int32] = [-1, -1]
        guard Glibc.pipe(&ends) == 0 else { throw .failed("pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (UnixFD(taking: ends[0]), StreamPipe(adopting: ends[1]))
    }

    /// Takes over `writer`, a pipe's (or a socket's) writing end handed over by a caller:
    /// made non-blocking, with a pipe's buffer raised to 1 MiB where the system allows.
    public init(adopting writer: Int32) {
        self.writer = writer
        _ = fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) | O_NONBLOCK)
        _ = fcntl(writer, 1031 /* F_SETPIPE_SZ */, 1 << 20)
    }

    /// Writes `bytes` after what is queued, as much as the pipe takes; queues the rest.
    public mutating func write(_ bytes: [UInt8]) {
        guard !closed else { return }
        if backlog.isEmpty {
            // The usual case, a reader keeping up: straight from the chunk, nothing copied.
            let written = bytes.withUnsafeBytes { writeSome($0) }
            guard let written else { return }
            if written < bytes.count { backlog.append(contentsOf: bytes[written...]) }
        } else {
            backlog += bytes
            let written = backlog.withUnsafeBytes { writeSome($0) }
            guard let written else { return }
            backlog.removeFirst(written)
        }
        closeIfTooFarBehind()
    }

    /// Takes over a write made elsewhere that the pipe did not take in full: the rest of
    /// `bytes` after `written` waits in the backlog, or, when the write failed with `error`
    /// (the reader went away), the pipe closes.
    public mutating func takeOver(_ bytes: [UInt8], written: Int, error: Int32) {
        guard !closed else { return }
        guard error == 0 else {
            close()
            return
        }
        backlog.append(contentsOf: bytes[min(written, bytes.count)...])
        closeIfTooFarBehind()
    }

    /// Gives up on a reader with more than `limit` bytes waiting.
    private mutating func closeIfTooFarBehind() {
        if backlog.count > Self.limit { close() }
    }

    /// Writes from `bytes` until done or the pipe is full; returns the count written, nil
    /// once closed (the reader went away).
    private mutating func writeSome(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(writer, bytes.baseAddress! + done, bytes.count - done)
            if n > 0 {
                done += n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && errno == EAGAIN {
                break
            } else {
                close()  // EPIPE: the reader went away
                return nil
            }
        }
        return done
    }

    /// How long `finish` waits for a reader that takes nothing, and how long for one that
    /// keeps taking.
    public static let patience: Duration = .seconds(1)
    public static let finishLimit: Duration = .seconds(30)

    /// Offers the backlog to the reader every 50 ms, then closes (EOF): once all of it is
    /// taken, once the reader has taken nothing for `patience` (counted from the last time
    /// it took some, so a reader still busy elsewhere when the pass-thru ended loses
    /// nothing), or after `finishLimit` in all. It only sleeps between writes, so it holds
    /// no thread while it waits.
    public mutating func finish() async {
        let clock = ContinuousClock()
        let started = clock.now
        var lastTaken = started
        while !closed, !backlog.isEmpty, clock.now - lastTaken < Self.patience, clock.now - started < Self.finishLimit {
            try? await Task.sleep(for: .milliseconds(50))
            let waiting = backlog.count
            write([])
            if backlog.count < waiting { lastTaken = clock.now }
        }
        close()
    }

    public mutating func close() {
        guard !closed else { return }
        closed = true
        backlog = []
        _ = Glibc.close(writer)
    }
}
