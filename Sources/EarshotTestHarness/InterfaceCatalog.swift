import EarshotDBus
import Foundation

/// Which service serves each interface kept in `dbus/`, so the tests can check each
/// `dbus/<interface>.xml` against what the running service really serves.
public struct InterfaceSource: Sendable {
    public let interface: String
    public let executable: String
    public let busName: String
    public let arguments: [String]
    public let environment: [String: String]
    /// Returns the path of an object that has the interface (creating one if needed).
    public let objectPath: @Sendable (DBusConnection) async throws -> ObjectPath

    public init(interface: String, executable: String, busName: String, arguments: [String] = [],
                environment: [String: String] = [:],
                objectPath: @escaping @Sendable (DBusConnection) async throws -> ObjectPath) {
        self.interface = interface
        self.executable = executable
        self.busName = busName
        self.arguments = arguments
        self.environment = environment
        self.objectPath = objectPath
    }
}

public enum InterfaceCatalog {
    /// A store of the piece service's own for the introspection checks.
    static let piecesDirectory = FileManager.default.temporaryDirectory
        .appendingPathComponent("earshot-introspection-\(getpid())/pieces").path

    /// A state file of the session service's own for the introspection checks.
    static let sessionStateFile = FileManager.default.temporaryDirectory
        .appendingPathComponent("earshot-introspection-\(getpid())/session.json").path

    /// Every interface a product service serves, by name. A `dbus/*.xml` file whose
    /// interface is missing here fails the check, so new interfaces must be added.
    public static let sources: [String: InterfaceSource] = Dictionary(uniqueKeysWithValues: [
        // The capture service on ALSA's `null` PCM (silence), paced so a pass-thru lasts.
        InterfaceSource(interface: "org.earshot.Capture1", executable: "earshot-capture", busName: "org.earshot.Capture1",
                        arguments: ["--device", "null", "--pace", "realtime"]) { _ in "/org/earshot/Capture1" },
        InterfaceSource(interface: "org.earshot.Capture1.PassThru", executable: "earshot-capture", busName: "org.earshot.Capture1",
                        arguments: ["--device", "null", "--pace", "realtime"]) { connection in
            let reply = try await connection.call(destination: "org.earshot.Capture1", path: "/org/earshot/Capture1",
                                                  interface: "org.earshot.Capture1", member: "PerformAudioPassThru", [.vardict([
                                                      "SamplingRate": .uint32(16000), "BitsPerSample": .uint32(16),
                                                      "AudioType": .string("PCM"), "MaxDuration": .uint32(60_000),
                                                  ])])
            guard let path = reply.first?.objectPathValue else { throw HarnessError("PerformAudioPassThru replied \(reply)") }
            return path
        },
        // The alert service playing on ALSA's `null` PCM; an alert with a button stays up.
        InterfaceSource(interface: "org.earshot.Alerts1", executable: "earshot-alerts", busName: "org.earshot.Alerts1",
                        arguments: ["--output-device", "null"]) { _ in "/org/earshot/Alerts1" },
        InterfaceSource(interface: "org.earshot.Alerts1.Alert", executable: "earshot-alerts", busName: "org.earshot.Alerts1",
                        arguments: ["--output-device", "null"]) { connection in
            let reply = try await connection.call(destination: "org.earshot.Alerts1", path: "/org/earshot/Alerts1",
                                                  interface: "org.earshot.Alerts1", member: "PresentAlert", [.vardict([
                                                      "Text": .string("Introspection"),
                                                      "SoftButtons": .vardicts([["Id": .uint16(1), "Text": .string("OK")]]),
                                                  ])])
            guard let path = reply.first?.objectPathValue else { throw HarnessError("PresentAlert replied \(reply)") }
            return path
        },
        // The session service with its state in a temporary file; an activation held by
        // the checking connection.
        InterfaceSource(interface: "org.earshot.Session1", executable: "earshot-session", busName: "org.earshot.Session1",
                        arguments: ["--state-file", sessionStateFile]) { _ in "/org/earshot/Session1" },
        InterfaceSource(interface: "org.earshot.Session1.Activation", executable: "earshot-session", busName: "org.earshot.Session1",
                        arguments: ["--state-file", sessionStateFile]) { connection in
            let reply = try await connection.call(destination: "org.earshot.Session1", path: "/org/earshot/Session1",
                                                  interface: "org.earshot.Session1", member: "Activate",
                                                  [.vardict(["Category": .string("playback")])])
            guard let path = reply.first?.objectPathValue else { throw HarnessError("Activate replied \(reply)") }
            return path
        },
        // The piece store in a temporary directory of its own.
        InterfaceSource(interface: "org.earshot.Pieces1", executable: "earshot-pieces", busName: "org.earshot.Pieces1",
                        arguments: ["--data-dir", piecesDirectory]) { _ in "/org/earshot/Pieces1" },
        // The orchestrator alone: a job it cannot run ends at once and lingers.
        InterfaceSource(interface: "org.earshot.Orchestrator1", executable: "earshot-orchestrator",
                        busName: "org.earshot.Orchestrator1") { _ in "/org/earshot/Orchestrator1" },
        InterfaceSource(interface: "org.earshot.Orchestrator1.Job", executable: "earshot-orchestrator",
                        busName: "org.earshot.Orchestrator1") { connection in
            let reply = try await connection.call(destination: "org.earshot.Orchestrator1", path: "/org/earshot/Orchestrator1",
                                                  interface: "org.earshot.Orchestrator1", member: "RecordPiece",
                                                  [.vardict(["Title": .string("Introspection")])])
            guard let path = reply.first?.objectPathValue else { throw HarnessError("RecordPiece replied \(reply)") }
            return path
        },
    ].map { ($0.interface, $0) })

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
