import CGlibcExtras

/// Giving memory back to the system after bursts of work.
///
/// Services handle large short-lived buffers (rendered speech, audio chunks, files) and
/// bursts of small allocations (a request with thousands of elements). glibc keeps what
/// they free for later use; a long-running service would stay at its high-water mark.
public enum MemoryReturn {
    /// How often free heap pages are handed back.
    public static let trimInterval: Duration = .seconds(10)

    /// glibc serves large blocks from the heap once one has been freed (its mmap threshold
    /// rises), where freeing rarely returns memory; a fixed threshold keeps every buffer of
    /// 128 KiB or more in its own mapping, unmapped on free.
    public static func keepLargeBuffersOffTheHeap() {
        _ = mallopt(M_MMAP_THRESHOLD, 128 * 1024)
    }

    /// Every `trimInterval` until cancelled, returns the heaps' free pages to the system
    /// (`malloc_trim`, which takes a millisecond or so).
    public static func trimPeriodically() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: trimInterval) } catch { return }
            _ = malloc_trim(0)
        }
    }
}
