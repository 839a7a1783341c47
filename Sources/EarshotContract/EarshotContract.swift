@_exported import DBusDeclarations
import ContractCore

/// Earshot's D-Bus contract as data: every service's bus name, object paths and interfaces,
/// each member with its signature, documentation and named errors. The services bind their
/// handlers to these declarations; introspection XML and the API pages are rendered from them.
public enum EarshotContract {
    /// Every service, in the order the documentation presents them.
    public static let services: [ServiceDeclaration] = [
        CaptureContract.service, AlertsContract.service, PiecesContract.service, SessionContract.service,
        OrchestratorContract.service,
    ]

    /// The prefix of Earshot's own error names.
    public static let errorPrefix = EarshotErrorName.prefix

    /// A closed set in words: "a, b or c".
    static func either(_ values: [String]) -> String {
        values.count < 2 ? values.joined() : values.dropLast().joined(separator: ", ") + " or " + values[values.count - 1]
    }

    /// The full names of Earshot errors.
    static func errors(_ names: EarshotErrorName...) -> [String] { names.map(\.name) }

    /// `org.freedesktop.DBus.Error.InvalidArgs`: a wrong type, an unknown or missing key.
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"

    /// `org.freedesktop.DBus.Error.AccessDenied`: a path the caller's uid may not open.
    static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"

    /// `org.freedesktop.DBus.Error.LimitsExceeded`: a per-client or per-service limit is reached.
    public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
}

/// One service: its executable, its well-known name, and the interfaces it serves.
public struct ServiceDeclaration: Sendable {
    public let executable: String
    public let busName: String
    public let doc: String
    /// The manager object, at the path named like the bus name.
    public let managerPath: String
    public let interfaces: [InterfaceDeclaration]
    /// Where each interface is served (by interface name): the manager path, or a pattern
    /// for per-request objects such as `/org/earshot/Capture1/PassThru/N`.
    public let paths: [String: String]
    /// How each interface behaves beyond its members (by interface name), in paragraphs.
    public let notes: [String: [String]]

    public init(executable: String, busName: String, doc: String, managerPath: String, interfaces: [InterfaceDeclaration],
                paths: [String: String] = [:], notes: [String: [String]] = [:]) {
        self.executable = executable
        self.busName = busName
        self.doc = doc
        self.managerPath = managerPath
        self.interfaces = interfaces
        self.paths = paths
        self.notes = notes
    }

    /// Where `interface` is served.
    public func path(of interface: InterfaceDeclaration) -> String { paths[interface.name] ?? managerPath }

    /// The introspection document of every interface the service serves, as `--introspect`
    /// prints it.
    public var introspection: String { IntrospectionXML.document(interfaces: interfaces) }
}
