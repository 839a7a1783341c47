import CGlibcExtras
import Glibc
import Synchronization

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
/// glibc's default).
public enum AllocatorTunables {
    static let variable = "GLIBC_TUNABLES"
    /// The tunables a service runs with, and their values.
    static let settings: KeyValuePairs<String, String> = [
        "glibc.malloc.tcache_count": "0",
        "glibc.malloc.arena_max": "2",
    ]
    /// Set for the second start only, so that there is never a third, whatever a loader
    /// makes of the setting.
    static let restarted = "EARSHOT_RESTARTED_FOR_TUNABLES"
    /// Whether this process image has decided already (the first call decides).
    private static let decided = Atomic<Bool>(false)

    /// What `GLIBC_TUNABLES` should become, or nil when it already names every tunable.
    static func tunables(adding current: String?) -> String? {
        let given = current.map { $0.split(separator: ":").map(String.init) } ?? []
        let names = Set(given.map { $0.split(separator: "=", maxSplits: 1).first.map(String.init) ?? "" })
        let missing = settings.filter { !names.contains($0.key) }.map { "\($0.key)=\($0.value)" }
        if missing.isEmpty { return nil }
        return (given + missing).joined(separator: ":")
    }

    /// GLIBC_TUNABLES as this process sees it (the loader may rewrite the copy that
    /// /proc/PID/environ shows).
    public static var tunables: String? { getenv(variable).map { String(cString: $0) } }

    /// Unless `GLIBC_TUNABLES` names every setting already, executes this program again
    /// with the missing ones added; returns only when that is not needed or not possible
    /// (no `/proc`, a program replaced on disk, a set-uid start, where the loader would
    /// drop the setting).
    public static func apply() {
        guard !decided.exchange(true, ordering: .relaxed) else { return }
        if getenv(restarted) != nil {
            unsetenv(restarted)
            return
        }
        let current = tunables
        guard let wanted = tunables(adding: current) else { return }
        guard getauxval(UInt(AT_SECURE)) == 0 else { return }
        // The file's own path, not /proc/self/exe: the process keeps its name (comm).
        var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &path, path.count - 1)
        guard length > 0, access(path, X_OK) == 0 else { return }
        setenv(variable, wanted, 1)
        setenv(restarted, "1", 1)
        execv(path, CommandLine.unsafeArgv)
        // Still here: start as is.
        unsetenv(restarted)
        if let current { setenv(variable, current, 1) } else { unsetenv(variable) }
    }
}
