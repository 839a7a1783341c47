import Glibc

/// A value guarded by a `pthread_mutex`.
///
/// Used instead of `Synchronization.Mutex`, which on Linux locks with raw futex calls
/// that ThreadSanitizer cannot see, so every access under it would be reported as a race.
public final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `value` is read and written only inside `withLock`, between
    // pthread_mutex_lock and pthread_mutex_unlock on `mutex`, which is never copied
    // (it lives in its own allocation for the object's lifetime).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
