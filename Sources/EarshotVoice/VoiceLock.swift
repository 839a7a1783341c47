import Glibc

/// A `pthread_mutex_t` guarding state shared between threads inside EarshotVoice.
///
/// A pthread mutex rather than `Synchronization.Mutex`, because ThreadSanitizer sees pthread
/// locking on Linux and not futex-based locking. The mutex lives in its own allocation for
/// the object's lifetime, so it is never moved or copied.
final class VoiceLock: @unchecked Sendable {
    // @unchecked Sendable: the only stored property is the mutex, which is made to be used
    // from several threads at once; it is initialized before the object is shared and
    // destroyed in deinit, when no thread can hold a reference any more.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
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
}
