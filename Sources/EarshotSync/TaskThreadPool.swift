@_spi(ExperimentalScheduling) import _Concurrency
import Glibc

/// Threads of the process's own that run its tasks: a task executor with delayed jobs
/// (`Task.sleep`, timeouts), which a service installs as its default executor in place of
/// libdispatch's global queues (`ServiceExecutors`).
///
/// Jobs run in the order they became ready, on at most `width` threads, each started when
/// work first finds every running one busy and kept from then on. A thread with nothing
/// ready waits on a condition variable until the earliest delayed job is due, or without a
/// deadline when none is waiting: an idle pool wakes for nothing. (On Linux libdispatch
/// checks its thread pool once a second, from its first worker thread on, for as long as
/// the process lives.) In exchange the pool never adds a thread because one is blocked:
/// as on the cooperative pool, a job must not wait for long (disk and device work go to a
/// `BlockingQueue` or a thread of their own).
package final class TaskThreadPool: TaskExecutor, SchedulingExecutor, @unchecked Sendable {
    // @unchecked Sendable: `name` and `width` are immutable; every other stored property
    // (`ready`, `readyHead`, `delayed`, `started`, `idle`, `wakesPending`) is read and
    // written only with `lock` held.

    /// The most threads the pool runs.
    package let width: Int
    private let name: String
    private let lock = ThreadLock()
    /// Jobs ready to run, oldest first from `readyHead` (the slots before it are done).
    private var ready: [UnownedJob] = []
    private var readyHead = 0
    private var delayed = DelayedJobs()
    private var started = 0
    /// Threads waiting for work, and how many of them were signalled and have not woken yet.
    private var idle = 0
    private var wakesPending = 0

    /// A pool of at most `width` threads (at least one), named `name` and their number.
    package init(name: String, width: Int) {
        self.name = name
        self.width = max(1, width)
    }

    /// Runs `job` as soon as a thread is free.
    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.withLock {
            ready.append(job)
            wakeOrStartLocked()
        }
    }

    package func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
        schedule(UnownedJob(job), after: clock.now.duration(to: instant))
    }

    package func enqueue<C: Clock>(_ job: consuming ExecutorJob, after delay: C.Duration, tolerance: C.Duration?, clock: C) {
        schedule(UnownedJob(job), after: delay)
    }

    /// Jobs waiting to be due, and jobs ready (for tests and diagnostics).
    package var queued: (delayed: Int, ready: Int) {
        lock.withLock { (delayed.count, ready.count - readyHead) }
    }

    /// Threads started so far.
    package var threadsStarted: Int { lock.withLock { started } }

    // MARK: - Scheduling

    /// `delay` is measured from now on `CLOCK_MONOTONIC`, whatever clock it came from: the
    /// standard clocks differ only across a system suspend. A duration that is not a
    /// `Swift.Duration` (no standard clock has one) makes the job ready at once.
    private func schedule<D: DurationProtocol>(_ job: UnownedJob, after delay: D) {
        let wait = (delay as? Duration)?.nanosecondsClamped ?? 0
        let deadline = monotonicNanoseconds() + wait
        lock.withLock {
            if wait == 0 {
                ready.append(job)
                wakeOrStartLocked()
                return
            }
            let earliest = delayed.earliest
            delayed.insert(job, deadline: deadline)
            if started == 0 {
                startThreadLocked()
            } else if idle > 0, earliest.map({ deadline < $0 }) ?? true {
                // The waiting threads' deadline is later than this one (or there was none).
                lock.broadcastLocked()
            }
        }
    }

    // MARK: - Threads

    /// Finds a thread for a job just made ready: a waiting one not already signalled, else a
    /// new one while fewer than `width` run.
    private func wakeOrStartLocked() {
        if idle > wakesPending {
            wakesPending += 1
            lock.signalLocked()
        } else if started < width {
            startThreadLocked()
        }
    }

    private func startThreadLocked() {
        // A thread that cannot be started now is tried again with the next job; the threads
        // already running take the work meanwhile.
        if case .success = Threads.detached(name: "\(name)-\(started)", { [self] in work() }) {
            started += 1
        }
    }

    /// A pool thread's life: the next job, run; for ever.
    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            let job = lock.withLock { nextJobLocked() }
            job.runSynchronously(on: executor)
        }
    }

    /// Waits until a job is ready (moving the delayed ones that are due) and takes it.
    private func nextJobLocked() -> UnownedJob {
        while true {
            if delayed.count > 0 {
                let now = monotonicNanoseconds()
                while let due = delayed.popDue(at: now) { ready.append(due) }
            }
            if readyHead < ready.count {
                let job = ready[readyHead]
                readyHead += 1
                if readyHead == ready.count {
                    ready.removeAll(keepingCapacity: true)
                    readyHead = 0
                } else {
                    // More is ready than this thread takes: another one gets to it.
                    if readyHead >= 64, readyHead * 2 >= ready.count {
                        ready.removeFirst(readyHead)
                        readyHead = 0
                    }
                    wakeOrStartLocked()
                }
                return job
            }
            idle += 1
            lock.waitOnceLocked(deadline: delayed.earliest)
            idle -= 1
            if wakesPending > 0 { wakesPending -= 1 }
        }
    }
}
