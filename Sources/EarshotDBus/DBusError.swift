/// A D-Bus error: a dotted error name and a human-readable message.
///
/// Error replies received from peers become `DBusError`s, and a handler that throws one
/// sends it back as an error reply with the same name and message.
public struct DBusError: Error, Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }

    // MARK: Standard org.freedesktop.DBus.Error names

    public static let prefix = "org.freedesktop.DBus.Error."

    public static func standard(_ suffix: String, _ message: String) -> DBusError {
        DBusError(name: prefix + suffix, message: message)
    }

    public static func failed(_ message: String) -> DBusError { standard("Failed", message) }
    public static func invalidArgs(_ message: String) -> DBusError { standard("InvalidArgs", message) }
    public static func unknownMethod(_ message: String) -> DBusError { standard("UnknownMethod", message) }
    public static func unknownObject(_ message: String) -> DBusError { standard("UnknownObject", message) }
    public static func unknownInterface(_ message: String) -> DBusError { standard("UnknownInterface", message) }
    public static func unknownProperty(_ message: String) -> DBusError { standard("UnknownProperty", message) }
    public static func propertyReadOnly(_ message: String) -> DBusError { standard("PropertyReadOnly", message) }
    public static func accessDenied(_ message: String) -> DBusError { standard("AccessDenied", message) }
    public static func noReply(_ message: String) -> DBusError { standard("NoReply", message) }
    public static func timeout(_ message: String) -> DBusError { standard("Timeout", message) }
    public static func disconnected(_ message: String) -> DBusError { standard("Disconnected", message) }
    public static func noMemory(_ message: String) -> DBusError { standard("NoMemory", message) }
}

/// `requestName`'s refusal: the well-known name is owned by another connection. Not an
/// error reply of the bus (the bus answers `RequestName` with a code), so it has no error name.
public struct BusNameTaken: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name asked for.
    public let name: String
    /// Its owner's unique name, when the bus still said whom.
    public let owner: String?

    public init(name: String, owner: String?) {
        self.name = name
        self.owner = owner
    }

    public var description: String { "the name \(name) is already owned by \(owner ?? "another connection")" }
}
