import EarshotDBus
import Foundation

/// Which service serves each interface kept in `dbus/`, so the tests can check each
/// `dbus/<interface>.xml` against what the running service really serves.
public struct InterfaceSource: Sendable {
    public let interface: String
    public let executable: String
    public let busName: String
    public let arguments: [String]
    /// Returns the path of an object that has the interface (creating one if needed).
    public let objectPath: @Sendable (DBusConnection) async throws -> ObjectPath

    public init(interface: String, executable: String, busName: String, arguments: [String] = [],
                objectPath: @escaping @Sendable (DBusConnection) async throws -> ObjectPath) {
        self.interface = interface
        self.executable = executable
        self.busName = busName
        self.arguments = arguments
        self.objectPath = objectPath
    }
}

public enum InterfaceCatalog {
    /// Every interface a product service serves, by name. A `dbus/*.xml` file whose
    /// interface is missing here fails the check, so new interfaces must be added.
    public static let sources: [String: InterfaceSource] = [:]

    /// The `<interface name="…">…</interface>` element of `name` in an introspection
    /// document, each line trimmed, or nil when the document has no such interface.
    public static func interfaceElement(named name: String, in document: String) -> String? {
        let lines = document.split(separator: "\n", omittingEmptySubsequences: true)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard let start = lines.firstIndex(of: "<interface name=\"\(name)\">"),
              let end = lines[start...].firstIndex(of: "</interface>") else { return nil }
        return lines[start...end].joined(separator: "\n")
    }

    /// The interface files in a `dbus/` directory (`NAME.xml`, NAME being the interface).
    public static func interfaceFiles(in directory: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "xml" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// Fetches the introspection document of `path` from `busName`.
    public static func introspect(_ connection: DBusConnection, busName: String, path: ObjectPath) async throws -> String {
        let reply = try await connection.call(destination: busName, path: path,
                                              interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
        guard let xml = reply.first?.stringValue else { throw HarnessError("Introspect returned \(reply)") }
        return xml
    }
}
