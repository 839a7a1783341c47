import ArgumentParser

/// The command of a service executable (`@main`): before anything else, even parsing its
/// arguments, it sets what it can of the allocator's settings that `GLIBC_TUNABLES` lacks
/// (`AllocatorTunables.applyInProcess`), while it has no other thread. Then it runs on the
/// service's own executors (`ServiceExecutors`).
public protocol ServiceCommand: AsyncParsableCommand {}

extension ServiceCommand {
    public static func main() {
        let unset = AllocatorTunables.applyInProcess()
        ServiceMain.allocatorSettingsUnset.withLock { $0 = unset }
        ServiceExecutors.run { await main(nil) }
    }
}
