/// A value guarded by a `ThreadLock`.
public final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `value` is read and written only inside `lock.withLock`.
    // (Visible to inlined code only, so that each caller gets `withLock` specialized for its
    // value and result, with no generic call per use. No run-time exclusivity check on
    // `value` either: the lock already makes every access exclusive, and a nested
    // `withLock` on the same value would deadlock before any check could report it.)
    @usableFromInline let lock = ThreadLock()
    @exclusivity(unchecked) @usableFromInline var value: Value

    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.withLock { () throws(Failure) -> Result in try body(&value) }
    }
}
