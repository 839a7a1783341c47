import EarshotDBus
import Foundation

/// Reading introspection documents: an interface's element, the files of a `dbus/`
/// directory, and what a service serves.
public enum InterfaceCatalog {
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
