import ArgumentParser
import EarshotContract
import EarshotDBus

/// `earshot session …`: the audio session (org.earshot.Session1).
struct SessionSubcommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Read, set and watch the audio session (Session1), and hold an activation.",
        discussion: ClientExit.discussion,
        subcommands: [SessionGetCommand.self, SessionSetCommand.self, SessionInputsCommand.self, SessionWatchCommand.self,
                      SessionActivateCommand.self])

    /// Prints a `GetState` reply.
    static func printState(_ state: [String: DBusValue], json: Bool) {
        if json {
            Terminal.line(JSONValue.dictionary(state).text)
        } else {
            for line in ValueText.lines(state) { Terminal.line(line) }
        }
    }

    static func state(_ client: BusClient) async throws(ClientFailure) -> [String: DBusValue] {
        let reply = try await client.call(.session, SessionContract.Manager.getState.name)
        guard let state = reply.first?.stringKeyedValue else { throw .failed("GetState replied \(reply)") }
        return state
    }
}

/// `earshot session get`: the state in force.
struct SessionGetCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Show the session state in force (Session1.GetState).",
        discussion: """
            Category, mode, options, activity, the sample rate and IO buffer duration the \
            device granted, the input and its channels, the route.

            \(ClientExit.discussion)
            """)

    @OptionGroup var options: ClientOptions

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        SessionSubcommand.printState(try await SessionSubcommand.state(client), json: options.json)
        return ClientExit.success
    }
}

/// `earshot session inputs`: the capture inputs the session can route.
struct SessionInputsCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "inputs", abstract: "List the capture inputs (Session1.ListInputs).",
        discussion: ClientExit.discussion)

    @OptionGroup var options: ClientOptions

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        let reply = try await client.call(.session, SessionContract.Manager.listInputs.name)
        guard let inputs = reply.first?.arrayValue?.compactMap(\.stringKeyedValue) else { throw .failed("ListInputs replied \(reply)") }
        if options.json {
            printJSON(.array(inputs.map(JSONValue.dictionary)))
            return ClientExit.success
        }
        func list(_ value: DBusValue?) -> String {
            value?.arrayValue?.map(ValueText.describe).joined(separator: ",") ?? ""
        }
        TextTable.print(header: ["NAME", "CHANNELS", "RATES", "POLAR PATTERNS", "DESCRIPTION"], rows: inputs.map { input in
            [input["Name"]?.stringValue ?? "?", list(input["Channels"]), list(input["SampleRates"]), list(input["PolarPatterns"]),
             input["Description"]?.stringValue ?? ""]
        })
        return ClientExit.success
    }
}
