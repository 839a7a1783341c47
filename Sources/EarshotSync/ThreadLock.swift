import Glibc

/// A `pthread_mutex_t` with a condition variable: the one lock of every Earshot module.
///
/// Used instead of `Synchronization.Mutex`, which on Linux locks with raw futex calls that
/// ThreadSanitizer cannot see, so every access under it would be reported as a race. The
/// mutex and condition live in their own allocations for the object's lifetime, so they
/// are never moved or copied. Timed waits are measured on `CLOCK_MONOTONIC`.
public final class ThreadLock: @unchecked Sendable {
    // @unchecked Sendable: the only state is the mutex and condition themselves, which are
    // made to be shared between threads; they are initialized before the object is shared
    // and destroyed in deinit, when no thread holds a reference any more.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held (inlined into its callers).
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits on the condition until `done()` is true. Call only inside `withLock`.
    public func waitLocked(until done: () -> Bool) {
        while !done() {
            pthread_cond_wait(condition, mutex)
        }
    }

    /// Waits once on the condition: until woken, until `deadline` (`CLOCK_MONOTONIC`
    /// nanoseconds) when one is given, or spuriously. Call only inside `withLock`, and look
    /// again at what was waited for.
    public func waitOnceLocked(deadline: UInt64?) {
        guard let deadline else {
            pthread_cond_wait(condition, mutex)
            return
        }
        var due = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        _ = pthread_cond_timedwait(condition, mutex, &due)
    }

    /// Wakes one waiter. Call inside `withLock`.
    public func signalLocked() {
        pthread_cond_signal(condition)
    }

    /// Wakes every waiter. Call inside `withLock`.
    public func broadcastLocked() {
        pthread_cond_broadcast(condition)
    }
}
