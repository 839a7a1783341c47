import ArgumentParser
import EarshotDBus
import Logging

/// The flags every Earshot service takes: which bus, and how much to log.
public struct BusOptions: ParsableArguments, Sendable {
    @Flag(help: "Use the system bus instead of the session bus (the one at --address when given).")
    public var system = false

    @Option(help: ArgumentHelp("Connect to the bus at this D-Bus address (instead of DBUS_SESSION_BUS_ADDRESS, or with --system of the system bus's usual address).",
                               valueName: "address"))
    public var address: String?

    @Option(help: ArgumentHelp("Log level: trace, debug, info, notice, warning, error or critical.",
                               valueName: "level"),
            transform: BusOptions.parseLevel)
    public var logLevel: Logger.Level = .info

    public init() {}

    /// The bus these flags select.
    public var bus: BusAddress {
        if let address { return .address(address) }
        return system ? .system : .session
    }

    /// Whether that bus is a system bus (`--system`, with or without `--address`): the
    /// services then tell callers apart by uid, let uid 0 and their own user act on any
    /// request, and check the paths callers name against the callers' rights.
    public var isSystemBus: Bool { system }

    static func parseLevel(_ text: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw ValidationError("unknown log level '\(text)'; use one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return level
    }
}
