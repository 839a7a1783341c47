import EarshotSync
import FoundationEssentials
import Glibc

/// Watches what can change the audio routes with inotify: the kernel's sound devices
/// (`/dev/snd`) and the ALSA configuration files in use. A burst of events (an editor's
/// write, rename and chmod) becomes one call of `onChange`, on the watcher's own thread.
final class RouteWatcher: Sendable {
    /// Events closer together than this are one change.
    static let settleTime: Int32 = 30  // ms

    private let inotify: Int32
    private let wake: (read: Int32, write: Int32)
    /// Watch descriptor → the names that matter in that directory (empty: every name).
    private let watches: [Int32: Set<String>]
    private let stopped = Locked(false)

    /// Watches `files` (through their directories, so that a file replaced by a rename is
    /// seen) and every entry of `directories`. Directories that do not exist are skipped.
    init(files: [String], directories: [String]) throws {
        inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            close(inotify)
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        wake = (fds[0], fds[1])
        var names: [String: Set<String>] = [:]  // directory → the names watched in it
        for file in files {
            let url = URL(fileURLWithPath: file)
            names[url.deletingLastPathComponent().path, default: []].insert(url.lastPathComponent)
        }
        for directory in directories { names[directory] = [] }  // every entry
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
        var watches: [Int32: Set<String>] = [:]
        for (directory, watched) in names {
            let descriptor = inotify_add_watch(inotify, directory, mask)
            guard descriptor >= 0 else { continue }
            watches[descriptor] = watched
        }
        self.watches = watches
    }

    /// How many directories are watched.
    var watchCount: Int { watches.count }

    /// Starts the watching thread.
    func start(onChange: @escaping @Sendable () -> Void) {
        Threads.detached(name: "earshot-routes") { [self] in self.loop(onChange) }
    }

    func stop() {
        stopped.withLock { $0 = true }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    private func loop(_ onChange: @Sendable () -> Void) {
        defer {
            close(inotify)
            close(wake.read)
            close(wake.write)
        }
        while !stopped.withLock({ $0 }) {
            guard waitForEvents(timeout: -1) else { continue }
            var relevant = drain()
            // Let the burst settle, then report it once.
            while waitForEvents(timeout: Self.settleTime), !stopped.withLock({ $0 }) {
                relevant = drain() || relevant
            }
            if relevant, !stopped.withLock({ $0 }) { onChange() }
        }
    }

    /// Waits until inotify has events (true) or the timeout or a wake-up passes (false).
    private func waitForEvents(timeout: Int32) -> Bool {
        var fds = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
        let ready = poll(&fds, 2, timeout)
        guard ready > 0 else { return false }
        return fds[0].revents & Int16(POLLIN) != 0 && fds[1].revents == 0
    }

    /// Reads every queued event; true when one concerns a watched name.
    private func drain() -> Bool {
        var relevant = false
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { return relevant }
            var offset = 0
            buffer.withUnsafeBytes { raw in
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let nameStart = offset + MemoryLayout<inotify_event>.size
                    let nameBytes = raw[nameStart..<min(count, nameStart + Int(event.len))]
                    let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                    if let names = watches[event.wd], names.isEmpty || names.contains(name) {
                        relevant = true
                    }
                    if event.mask & UInt32(IN_Q_OVERFLOW) != 0 { relevant = true }
                    offset = nameStart + Int(event.len)
                }
            }
        }
    }
}
