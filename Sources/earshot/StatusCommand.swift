import ArgumentParser
import EarshotClient
import EarshotContract
import EarshotDBus
import Foundation

/// `earshot status`: which services are on the bus, and a line of state for each.
struct StatusCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show which Earshot services are on the bus, with a line of state for each.",
        discussion: """
            Lists org.earshot.Capture1, Alerts1, Session1, Pieces1 and Orchestrator1 with their \
            unique owner, and for each that runs: capture's active pass-thru and device, the \
            alert presented and the queue length, the session's category and input, the number \
            of pieces, the services the orchestrator sees.

            A service that is not running but that the bus starts on its first call (an \
            activation file, as on a head unit's system bus) is listed as 'activatable', and \
            not started by this command.

            Exit status: 0 when every service is on the bus or activatable, 3 when at least \
            one is neither (the list is printed either way), 1 on a D-Bus error.
            """)

    @OptionGroup var options: ClientOptions

    struct Entry {
        let service: BusService
        let owner: String?
        /// Not running, but started by the bus on its first call.
        var activatable = false
        var state: [(String, JSONValue)] = []
        var problem: String?
    }

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        var entries: [Entry] = []
        for service in BusService.all {
            var entry = Entry(service: service, owner: try await client.owner(of: service))
            if entry.owner == nil {
                entry.activatable = (try? await client.connection.isActivatable(service.name)) ?? false
            }
            if entry.owner != nil {
                do {
                    entry.state = try await client.with(service) { earshot in try await Self.state(service, earshot) }
                } catch {
                    entry.problem = error.description
                }
            }
            entries.append(entry)
        }
        if options.json {
            printJSON(.object([("services", .array(entries.map { entry in
                var members: [(String, JSONValue)] = [("name", .string(entry.service.name)),
                                                      ("running", .bool(entry.owner != nil)),
                                                      ("activatable", .bool(entry.activatable)),
                                                      ("owner", entry.owner.map(JSONValue.string) ?? .null)]
                if entry.owner != nil { members.append(("state", .object(entry.state))) }
                if let problem = entry.problem { members.append(("error", .string(problem))) }
                return .object(members)
            }))]))
        } else {
            let width = BusService.all.map(\.name.count).max() ?? 0
            for entry in entries {
                let name = entry.service.name.padding(toLength: width, withPad: " ", startingAt: 0)
                guard let owner = entry.owner else {
                    Terminal.line("\(name)  \(entry.activatable ? "activatable (starts on its first call)" : "not running")")
                    continue
                }
                let state = entry.problem.map { "cannot read state: \($0)" }
                    ?? entry.state.map { "\($0.0) \(Self.plain($0.1))" }.joined(separator: ", ")
                Terminal.line("\(name)  running  \(owner.padding(toLength: 7, withPad: " ", startingAt: 0))  \(state)")
            }
        }
        return entries.allSatisfy { $0.owner != nil || $0.activatable } ? ClientExit.success : ClientExit.notRunning
    }

    /// The properties worth a status line, by service, read through the client (each
    /// manager's in one call).
    static func state(_ service: BusService, _ earshot: Earshot) async throws -> [(String, JSONValue)] {
        func path(_ path: ObjectPath?) -> JSONValue { .string((path ?? .root).rawValue) }
        func number(_ value: UInt32) -> JSONValue { .uint(UInt64(value)) }
        switch service {
        case .capture:
            let values = try await earshot.capture.readAll()
            return [field(values, .active, path), field(values, .device, JSONValue.string)].compactMap { $0 }
        case .alerts:
            let values = try await earshot.alerts.readAll()
            return [field(values, .current, path), field(values, .queueLength, number)].compactMap { $0 }
        case .session:
            let values = try await earshot.session.readAll()
            var state = [field(values, .category, JSONValue.string), field(values, .mode, JSONValue.string),
                         field(values, .active, JSONValue.bool)].compactMap { $0 }
            // The route's two fields, as GetState names them.
            for key in [SessionContract.Manager.RouteKeys.input, SessionContract.Manager.RouteKeys.output] {
                if let value = values[.route]?[key.name] { state.append((key.name, JSONValue(value))) }
            }
            return state
        case .pieces:
            return [field(try await earshot.pieces.readAll(), .count, number)].compactMap { $0 }
        case .orchestrator:
            guard let services = try await earshot.orchestrator.readAll()[.services] else { return [] }
            return [("ServicesRunning", .uint(UInt64(services.values.filter(\.running).count))),
                    ("ServicesWatched", .uint(UInt64(services.count)))]
        default:
            return []
        }
    }

    /// A property's name and its value as JSON, when the reply had it.
    static func field<Object, Value>(_ values: PropertyValues<Object>, _ property: ObjectProperty<Object, Value>,
                                     _ json: (Value) -> JSONValue) -> (String, JSONValue)? {
        values[property].map { (property.declaration.name, json($0)) }
    }

    /// A JSON value as a status line shows it (strings without quotes).
    static func plain(_ value: JSONValue) -> String {
        if case .string(let text) = value { return ValueText.visible(text) }
        return value.text
    }
}
