@_spi(ExperimentalCustomExecutors) import _Concurrency
import Glibc

/// The main actor's executor: the process's main thread, running its jobs in order from
/// `run()` on, and waiting on a condition variable while there are none. (libdispatch's
/// main queue on Linux has the main thread exit and its jobs drained by worker threads of
/// its global queues.) A delayed job for the main actor waits in the default executor
/// (`TaskThreadPool`) and then comes here.
package final class MainThreadExecutor: MainExecutor, @unchecked Sendable {
    // @unchecked Sendable: `queue`, `stopping` and `thread` are read and written only with
    // `lock` held.
    private let lock = ThreadLock()
    private var queue: [UnownedJob] = []
    private var stopping = false
    /// The thread running `run()`.
    private var thread: pthread_t?

    package init() {}

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.withLock {
            queue.append(job)
            lock.signalLocked()
        }
    }

    /// Runs the jobs on the calling thread (the main thread) until `stop()`.
    package func run() throws {
        lock.withLock { thread = pthread_self() }
        let executor = asUnownedSerialExecutor()
        // Two arrays trade places: the queue is taken whole under the lock and run outside it.
        var running: [UnownedJob] = []
        while true {
            let stop = lock.withLock { () -> Bool in
                while queue.isEmpty && !stopping { lock.waitOnceLocked(deadline: nil) }
                swap(&queue, &running)
                return stopping
            }
            for job in running { job.runSynchronously(on: executor) }
            running.removeAll(keepingCapacity: true)
            if stop { return }
        }
    }

    /// Makes `run()` return once it has run the jobs queued by then.
    package func stop() {
        lock.withLock {
            stopping = true
            lock.signalLocked()
        }
    }

    package var isMainExecutor: Bool { true }

    package func checkIsolated() {
        precondition(isOnMainThread, "not on the main thread, which runs the main actor's jobs")
    }

    package func isIsolatingCurrentContext() -> Bool? { isOnMainThread }

    private var isOnMainThread: Bool {
        lock.withLock { thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }
}
