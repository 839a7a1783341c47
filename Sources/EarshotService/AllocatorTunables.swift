import CAllocatorTunables
import Glibc

/// glibc's allocator, set up for services: per-thread caches off and at most two heaps.
///
/// - `glibc.malloc.tcache_count=0`: each thread keeps up to seven freed blocks of each
///   small size (up to about 1 KiB) for its next allocations, outside its heap's
///   bookkeeping: `malloc_trim` cannot give their pages back, and a block left there pins
///   the page it sits on. After a burst of work a service's long-lived threads (the bus
///   connection's, the pool's) hold hundreds of them, scattered over heaps that grew tens
///   of MiB: the orchestrator stayed about 1 MiB above its idle footprint for good, 0.4 MiB
///   without them. The cost is a heap lock per small allocation, which the services'
///   workloads do not show.
/// - `glibc.malloc.arena_max=2`: glibc gives each new thread that allocates a heap of its
///   own (an arena) until there are eight per processor, and an arena, once made, stays.
///   A service's work runs on short-lived threads (a drop's disk and true-peak threads, the
///   pool's), so after a burst earshot-pieces had nine arenas instead of six, each holding
///   partly used pages `malloc_trim` cannot return: +0.4 to +0.5 MiB of heap after work,
///   about none with two arenas. Two still let the bus thread and a worker allocate
///   without waiting for each other.
///
/// These settings (in `GLIBC_TUNABLES`) are read only by the dynamic loader when a program
/// starts, so the process starts itself again, once, with those it lacks added. A tunable
/// `GLIBC_TUNABLES` already names is left as it is (`glibc.malloc.tcache_count=7` keeps
/// glibc's default). The decision is made in C (CAllocatorTunables): a service executable
/// links CTunablesAtStart, whose constructor makes it before the Swift runtime or the
/// program has done anything, so a start without the settings costs little more than the
/// loader's work; `apply()` is for programs started otherwise.
public enum AllocatorTunables {
    /// Set for the second start only, so that there is never a third.
    static var restarted: String { String(cString: earshot_tunables_restarted_variable) }

    /// What `GLIBC_TUNABLES` should become, or nil when it already names every tunable.
    static func tunables(adding current: String?) -> String? {
        guard let result = earshot_tunables_adding(current) else { return nil }
        defer { free(result) }
        return String(cString: result)
    }

    /// GLIBC_TUNABLES as this process sees it (the loader may rewrite the copy that
    /// /proc/PID/environ shows).
    public static var tunables: String? { getenv(earshot_tunables_variable).map { String(cString: $0) } }

    /// Unless `GLIBC_TUNABLES` names every setting already (or this process image has
    /// decided already, as a service executable's constructor does), executes this program
    /// again with the missing ones added; returns only when that is not needed or not
    /// possible (no `/proc`, a set-uid start, where the loader would drop the setting).
    public static func apply() {
        earshot_allocator_tunables_apply(CommandLine.unsafeArgv)
    }
}
