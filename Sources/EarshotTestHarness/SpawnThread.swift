import EarshotDBus
import Foundation

/// One thread that lives as long as the process and performs every child spawn.
///
/// Children run under `setpriv --pdeathsig KILL`, and the kernel sends that signal when the
/// *thread* that spawned the child exits, not the process. Threads of Swift's cooperative
/// pool exit after a few idle seconds, which would kill a bus or service in the middle of
/// a test; spawning from this thread, which never exits, avoids that.
final class SpawnThread: Sendable {
    static let shared = SpawnThread()

    private let work = Locked<[@Sendable () -> Void]>([])
    private let ready = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            while true {
                ready.wait()
                let next = work.withLock { list in list.isEmpty ? nil : list.removeFirst() }
                next?()
            }
        }
        thread.name = "earshot-spawn"
        thread.start()
    }

    /// Runs `body` on the spawn thread and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let result = Locked<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        work.withLock {
            $0.append {
                let value = body()
                result.withLock { $0 = value }
                done.signal()
            }
        }
        ready.signal()
        done.wait()
        return result.withLock { $0 }!
    }
}
