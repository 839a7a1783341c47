import EarshotSync
import FoundationEssentials
import Glibc

/// What tells the session that routes may have changed.
protocol RouteChangeSource: Sendable {
    func start(onChange: @escaping @Sendable () -> Void)
    func stop()
}

extension RouteWatcher: RouteChangeSource {}

/// The fallback when inotify is not available (e.g. the user's inotify instances are used
/// up): every `interval` it compares the watched files' identity, size and modification
/// time and the entries of the watched directories with the last look.
final class RoutePoller: RouteChangeSource {
    static let intervalMilliseconds = 500
    static var interval: Duration { .milliseconds(intervalMilliseconds) }

    private let files: [String]
    private let directories: [String]
    private let stopped = Locked(false)

    init(files: [String], directories: [String]) {
        self.files = files
        self.directories = directories
    }

    func start(onChange: @escaping @Sendable () -> Void) {
        Threads.detached(name: "earshot-routes") { [self] in
            var last = fingerprint()
            while !stopped.withLock({ $0 }) {
                usleep(UInt32(Self.intervalMilliseconds * 1000))
                let now = fingerprint()
                if now != last, !stopped.withLock({ $0 }) {
                    last = now
                    onChange()
                }
            }
        }
    }

    func stop() { stopped.withLock { $0 = true } }

    /// One line per watched file and directory entry.
    private func fingerprint() -> [String] {
        var lines: [String] = []
        for file in files {
            var info = stat()
            if stat(file, &info) == 0 {
                lines.append("\(file) \(info.st_ino) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)")
            } else {
                lines.append("\(file) -")
            }
        }
        for directory in directories {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            lines.append("\(directory): " + entries.sorted().joined(separator: " "))
        }
        return lines
    }
}
