import ArgumentParser
import EarshotClient
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
        try await client.with(.session) { try await $0.session.state().values }
    }
}

/// `earshot session get`: the state in force.
struct SessionGetCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Show the session state in force (Session1.\(SessionContract.Manager.getState.name)).",
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
        commandName: "inputs", abstract: "List the capture inputs (Session1.\(SessionContract.Manager.listInputs.name)).",
        discussion: ClientExit.discussion)

    @OptionGroup var options: ClientOptions

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        let inputs = try await client.with(.session) { try await $0.session.inputs() }
        if options.json {
            printJSON(.array(inputs.map { JSONValue.dictionary($0.values) }))
            return ClientExit.success
        }
        func list(_ value: DBusValue?) -> String {
            value?.arrayValue?.map(ValueText.describe).joined(separator: ",") ?? ""
        }
        TextTable.print(header: ["NAME", "CHANNELS", "RATES", "POLAR PATTERNS", "DESCRIPTION"], rows: inputs.map { input in
            typealias Keys = SessionContract.Manager.InputKeys
            return [input.name, list(input.values[Keys.channels.name]), list(input.values[Keys.sampleRates.name]),
                    list(input.values[Keys.polarPatterns.name]), input.description]
        })
        return ClientExit.success
    }
}
