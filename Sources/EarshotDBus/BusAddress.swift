import FoundationEssentials

/// Which bus to connect to.
public enum BusAddress: Sendable, Equatable, CustomStringConvertible {
    /// The user's session bus (`DBUS_SESSION_BUS_ADDRESS`, else the activating session
    /// bus's `DBUS_STARTER_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`).
    case session
    /// The system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`).
    case system
    /// An explicit D-Bus address such as `unix:path=/tmp/bus`.
    case address(String)

    public var description: String {
        switch self {
        case .session: "session bus"
        case .system: "system bus"
        case .address(let a): a
        }
    }

    /// The concrete address string libdbus should open.
    public func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) throws(DBusError) -> String {
        switch self {
        case .address(let a):
            guard !a.isEmpty else { throw .invalidArgs("empty bus address") }
            return a
        case .system:
            if let a = environment["DBUS_SYSTEM_BUS_ADDRESS"], !a.isEmpty { return a }
            return "unix:path=/run/dbus/system_bus_socket"
        case .session:
            if let a = environment["DBUS_SESSION_BUS_ADDRESS"], !a.isEmpty { return a }
            // A service the session bus activated is told where that bus is.
            if environment["DBUS_STARTER_BUS_TYPE"] == "session",
               let a = environment["DBUS_STARTER_ADDRESS"], !a.isEmpty { return a }
            if let runtime = environment["XDG_RUNTIME_DIR"],
               FileManager.default.fileExists(atPath: runtime + "/bus") {
                return "unix:path=" + runtime + "/bus"
            }
            throw .standard("NotSupported", "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist")
        }
    }
}
