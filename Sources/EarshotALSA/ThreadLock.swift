import Glibc

/// A `pthread_mutex_t` with a condition variable, for the capture thread's hand-offs.
///
/// Used instead of `Synchronization.Mutex`, whose futex-based locking ThreadSanitizer cannot
/// see on Linux. The mutex and condition live in their own allocations for the object's
/// lifetime, so they are never moved or copied.
final class ThreadLock: @unchecked Sendable {
    // @unchecked Sendable: the only state is the mutex and condition themselves, which are
    // designed to be shared between threads.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held.
    func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits on the condition until `done()` is true. Call only inside `withLock`.
    func waitLocked(until done: () -> Bool) {
        while !done() {
            pthread_cond_wait(condition, mutex)
        }
    }

    /// Wakes every waiter. Call inside `withLock`.
    func broadcastLocked() {
        pthread_cond_broadcast(condition)
    }
}

/// A value guarded by a `ThreadLock`.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched inside `lock.withLock`.
    private let lock = ThreadLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.withLock { () throws(Failure) -> Result in try body(&value) }
    }
}
