import CGlibcExtras
import EarshotDBus
import EarshotSync

/// Giving memory back to the system after bursts of work.
///
/// Services handle large short-lived buffers (rendered speech, audio chunks, files) and
/// bursts of small allocations (a request with thousands of elements). glibc keeps what
/// they free for later use; a long-running service would stay at its high-water mark.
/// Some keep caches and libraries for their work too (a database's page cache, a codec
/// library opened at first use); they register a release (`whenIdle`) that runs once the
/// service has gone quiet.
public enum MemoryReturn {
    /// How often free heap pages are handed back, and how long without calls makes a
    /// service quiet.
    public static let trimInterval: Duration = .seconds(10)

    /// How long after `trimSoon` its trim runs.
    public static let soonDelay: Duration = .seconds(1)

    /// Whether a `trimSoon` trim is waiting to run.
    private static let trimPending = Locked(false)

    /// What services let go of once quiet, in the order registered.
    private static let releases = Locked<[@Sendable () async -> Void]>([])

    /// glibc serves large blocks from the heap once one has been freed (its mmap threshold
    /// rises), where freeing rarely returns memory; a fixed threshold keeps every buffer of
    /// 128 KiB or more in its own mapping, unmapped on free.
    public static func keepLargeBuffersOffTheHeap() {
        _ = mallopt(M_MMAP_THRESHOLD, 128 * 1024)
    }

    /// Registers `release`, run (off the connection's thread) each time the service goes
    /// quiet after serving calls: caches to drop, libraries to close. It must leave the
    /// service able to do everything again, just more slowly the first time.
    public static func whenIdle(_ release: @escaping @Sendable () async -> Void) {
        releases.withLock { $0.append(release) }
    }

    /// Asks for the heaps' free pages to go back about `soonDelay` from now, one trim for
    /// all the requests made until it runs: for when a batch of objects has been let go
    /// (requests' objects leaving the bus after lingering, in the order they were made),
    /// so that their memory goes back then rather than at the next periodic trim, up to
    /// `trimInterval` later.
    public static func trimSoon() {
        let schedule = trimPending.withLock { pending -> Bool in
            guard !pending else { return false }
            pending = true
            return true
        }
        guard schedule else { return }
        Task.detached(priority: .background) {
            try? await Task.sleep(for: soonDelay)
            // Cleared first: what is freed while the trim runs asks for the next one.
            trimPending.withLock { $0 = false }
            _ = malloc_trim(0)
        }
    }

    /// Returns the heaps' free pages to the system (`malloc_trim`, tens of µs on these
    /// services' heaps) at once, which gives back what starting up used and freed
    /// (configuration parsed, introspection built); then, whenever `calls` are served, every
    /// `trimInterval` while they come. The first interval without any runs the registered
    /// releases, then trims; the next trims once more, for what the releases and work
    /// still under way let go of after that (a database's connections release their caches
    /// when they are next free). Then nothing is timed until the next call: an idle service
    /// is not woken (nor a thread started for it) every interval to find nothing to give
    /// back. Returns when cancelled.
    public static func trimPeriodically(calls: InFlightCalls) async {
        await trimPeriodically(calls: calls, interval: trimInterval,
                               release: { for release in releases.withLock({ $0 }) { await release() } },
                               trim: { _ = malloc_trim(0) })
    }

    /// `trimPeriodically(calls:)` with its interval, its releases and its trim given.
    static func trimPeriodically(calls: InFlightCalls, interval: Duration, release: () async -> Void, trim: () -> Void) async {
        trim()
        var last = calls.activity
        while !Task.isCancelled {
            await calls.nextCall(after: last.admitted)
            var quietIntervals = 0
            while quietIntervals < 2 {
                do { try await Task.sleep(for: interval) } catch { return }
                let now = calls.activity
                let quiet = now.isQuiet(since: last)
                last = now
                quietIntervals = quiet ? quietIntervals + 1 : 0
                if quietIntervals == 1 { await release() }
                trim()
            }
        }
    }
}
