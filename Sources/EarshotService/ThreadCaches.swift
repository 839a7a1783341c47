import CGlibcExtras
import Glibc
import Synchronization

/// glibc's per-thread caches of freed blocks, turned off for services.
///
/// Each thread keeps up to seven freed blocks of each small size (up to about 1 KiB) for
/// its next allocations, outside its heap's bookkeeping: `malloc_trim` cannot give their
/// pages back, and a block left there pins the page it sits on. After a burst of work a
/// service's long-lived threads (the bus connection's, the pool's) hold hundreds of them,
/// scattered over heaps that grew tens of MiB: the orchestrator stayed about 1 MiB above
/// its idle footprint for good, 0.4 MiB without them. The cost is a heap lock per small
/// allocation, which the services' workloads do not show.
///
/// The setting (`glibc.malloc.tcache_count=0` in `GLIBC_TUNABLES`) is read only by the
/// dynamic loader when a program starts, so the process starts itself again, once, with
/// it added. A `GLIBC_TUNABLES` that already sets `glibc.malloc.tcache_count` is left as
/// it is (`glibc.malloc.tcache_count=7` keeps glibc's default).
public enum ThreadCaches {
    static let variable = "GLIBC_TUNABLES"
    static let tunable = "glibc.malloc.tcache_count"
    /// Set for the second start only, so that there is never a third, whatever a loader
    /// makes of the setting.
    static let restarted = "EARSHOT_RESTARTED_FOR_TUNABLES"
    /// Whether this process image has decided already (the first call decides).
    private static let decided = Atomic<Bool>(false)

    /// What `GLIBC_TUNABLES` should become, or nil when it already says what to do.
    static func tunables(adding current: String?) -> String? {
        guard let current, !current.isEmpty else { return "\(tunable)=0" }
        let names = current.split(separator: ":").map { $0.split(separator: "=", maxSplits: 1).first.map(String.init) ?? "" }
        if names.contains(tunable) { return nil }
        return current + ":\(tunable)=0"
    }

    /// GLIBC_TUNABLES as this process sees it (the loader may rewrite the copy that
    /// /proc/PID/environ shows).
    public static var tunables: String? { getenv(variable).map { String(cString: $0) } }

    /// Unless already set, executes this program again with the caches off; returns only
    /// when that is not needed or not possible (no `/proc`, a program replaced on disk, a
    /// set-uid start, where the loader would drop the setting).
    public static func turnOff() {
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
