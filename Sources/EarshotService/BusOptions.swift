import ArgumentParser
import EarshotDBus
import Logging

/// The flags every Earshot service takes: which bus, and how much to log.
public struct BusOptions: ParsableArguments, Sendable {
    @Flag(help: "Connect to the system bus instead of the session bus.")
    public var system = false

    @Option(help: ArgumentHelp("Connect to the bus at this D-Bus address (overrides --system and DBUS_SESSION_BUS_ADDRESS).",
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

    static func parseLevel(_ text: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw ValidationError("unknown log level '\(text)'; use one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return level
    }
}
