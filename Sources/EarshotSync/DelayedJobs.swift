/// Delayed jobs in a binary heap, the earliest deadline (then the earliest scheduled) first.
struct DelayedJobs {
    private struct Entry {
        let deadline: UInt64
        let order: UInt64
        let job: UnownedJob

        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : order < other.order
        }
    }

    private var heap: [Entry] = []
    private var scheduled: UInt64 = 0

    var count: Int { heap.count }
    var earliest: UInt64? { heap.first?.deadline }

    mutating func insert(_ job: UnownedJob, deadline: UInt64) {
        scheduled &+= 1
        heap.append(Entry(deadline: deadline, order: scheduled, job: job))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest job if it is due at `now`.
    mutating func popDue(at now: UInt64) -> UnownedJob? {
        guard let first = heap.first, first.deadline <= now else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var first = parent
                if left < heap.count, heap[left].precedes(heap[first]) { first = left }
                if right < heap.count, heap[right].precedes(heap[first]) { first = right }
                if first == parent { break }
                heap.swapAt(parent, first)
                parent = first
            }
        }
        return first.job
    }
}
