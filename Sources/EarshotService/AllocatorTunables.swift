import CGlibcExtras
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
/// The systemd units and the D-Bus activation files set them (`GLIBC_TUNABLES`, read by the
/// dynamic loader when the program starts). A service started otherwise sets in-process
/// what glibc lets it (`mallopt(M_ARENA_MAX)`) and logs the one it cannot have
/// (the per-thread caches: glibc has no call for them).
public enum AllocatorTunables {
    /// The settings, as the units and activation files give them.
    public static let settings = ["glibc.malloc.tcache_count=0", "glibc.malloc.arena_max=2"]

    /// `GLIBC_TUNABLES` as the units set it.
    public static var environmentValue: String { settings.joined(separator: ":") }

    /// GLIBC_TUNABLES as this process sees it (the loader may rewrite the copy that
    /// /proc/PID/environ shows).
    public static var tunables: String? { getenv("GLIBC_TUNABLES").map { String(cString: $0) } }

    /// The settings whose tunable `current` does not name (a tunable it names keeps the
    /// value it has there: `glibc.malloc.tcache_count=7` keeps glibc's default).
    public static func missing(from current: String?) -> [String] {
        let named = Set((current ?? "").split(separator: ":").map { name(of: String($0)) })
        return settings.filter { !named.contains(name(of: $0)) }
    }

    /// What could not be set: the settings missing from `GLIBC_TUNABLES` that glibc offers
    /// no in-process call for. Call first thing in `main`, before other threads allocate.
    @discardableResult
    public static func applyInProcess() -> [String] {
        var unset: [String] = []
        for setting in missing(from: tunables) {
            switch name(of: setting) {
            case "glibc.malloc.arena_max":
                if mallopt(M_ARENA_MAX, 2) != 1 { unset.append(setting) }
            default:
                unset.append(setting)
            }
        }
        return unset
    }

    private static func name(of setting: String) -> String {
        setting.split(separator: "=", maxSplits: 1).first.map(String.init) ?? setting
    }
}
