extension Dictionary {
    /// Gives back the room of entries removed long ago. A Swift dictionary never shrinks by
    /// itself: one that held thousands of requests for a minute (objects lingering after a
    /// burst) would keep room for thousands for good. Rebuilt at its current size when less
    /// than a quarter of its capacity is in use: a copy of fewer entries than were removed
    /// since it last grew, so a removal stays O(1) amortised.
    public mutating func shrinkIfSparse() {
        guard capacity > 64, count < capacity / 4 else { return }
        var smaller = Self(minimumCapacity: count)
        for (key, value) in self { smaller[key] = value }
        self = smaller
    }

    /// Removes the entry for `key` and, when that leaves the dictionary sparse, gives back
    /// its room (`shrinkIfSparse`); returns the removed value.
    @discardableResult
    public mutating func removeValueShrinking(forKey key: Key) -> Value? {
        defer { shrinkIfSparse() }
        return removeValue(forKey: key)
    }
}
