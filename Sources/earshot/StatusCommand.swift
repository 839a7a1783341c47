import ArgumentParser
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
                    entry.state = Self.state(service, try await client.properties(service))
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

    /// The properties worth a status line, by service.
    static func state(_ service: BusService, _ properties: [String: DBusValue]) -> [(String, JSONValue)] {
        func pick(_ property: PropertyDeclaration) -> (String, JSONValue)? {
            properties[property].map { (property.name, JSONValue($0)) }
        }
        switch service {
        case .capture:
            return [pick(CaptureContract.Manager.active), pick(CaptureContract.Manager.device)].compactMap { $0 }
        case .alerts:
            return [pick(AlertsContract.Manager.current), pick(AlertsContract.Manager.queueLength)].compactMap { $0 }
        case .session:
            typealias Session = SessionContract.Manager
            var state = [pick(Session.category), pick(Session.mode), pick(Session.active)].compactMap { $0 }
            if let route = properties[Session.route]?.stringKeyedValue {
                // The route's two fields, as GetState names them.
                for key in [Session.RouteKeys.input, Session.RouteKeys.output] {
                    if let value = route[key] { state.append((key.name, JSONValue(value))) }
                }
            }
            return state
        case .pieces:
            return [pick(PiecesContract.Manager.count)].compactMap { $0 }
        case .orchestrator:
            guard let services = properties[OrchestratorContract.Manager.services]?.stringKeyedValue else { return [] }
            let running = services.values.filter { entry in
                if case .structure(let fields) = entry, fields.count == 2, fields[1] == .boolean(true) { true } else { false }
            }.count
            return [("ServicesRunning", .uint(UInt64(running))), ("ServicesWatched", .uint(UInt64(services.count)))]
        default:
            return []
        }
    }

    /// A JSON value as a status line shows it (strings without quotes).
    static func plain(_ value: JSONValue) -> String {
        if case .string(let text) = value { return ValueText.visible(text) }
        return value.text
    }
}
