import ArgumentParser

/// The command of a service executable (`@main`): before anything else, even parsing its
/// arguments, the process starts itself again if it must (`AllocatorTunables.apply`), so
/// that what it does twice is as little as possible. (An executable that links
/// CTunablesAtStart has decided already, in a constructor, before the Swift runtime
/// started; the call then returns at once.) Then it runs on the service's own executors
/// (`ServiceExecutors`).
public protocol ServiceCommand: AsyncParsableCommand {}

extension ServiceCommand {
    public static func main() {
        AllocatorTunables.apply()
        ServiceExecutors.run { await main(nil) }
    }
}
