import ArgumentParser
import EarshotClient
import EarshotContract
import EarshotDBus

/// `earshot session watch`: the session's signals as they come.
struct SessionWatchCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch", abstract: "Print the session's signals as they come, until Ctrl-C or --count.",
        discussion: """
            \(SessionContract.Manager.routeChanged.name), \(SessionContract.Manager.mediaServicesReset.name) and Reapplied are broadcast; Interruption is sent \
            only to an activation's owner, so it shows only for claims this client made. Once \
            subscribed, 'watching org.earshot.Session1' is written to stderr. With --json each \
            signal is one JSON document per line.

            Exit status: 0 after --count signals or Ctrl-C; 3 org.earshot.Session1 is not \
            running when the watch starts (if it leaves later, the watch goes on and says so \
            on stderr); 1 an error reply; 2 a usage error.
            """)

    @OptionGroup var options: ClientOptions

    @Option(help: ArgumentHelp("Stop after this many signals.", valueName: "n"))
    var count: Int?

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        try await client.require(.session)
        let events = ClientEvents()
        defer { events.stop() }
        events.forward(try await client.with(.session) { try await $0.session.events() })
        try await events.watch(.session, on: client)
        events.catchInterrupts()
        Terminal.error("watching \(BusService.session.name) (Ctrl-C to stop)")
        var seen = 0
        while count.map({ seen < $0 }) ?? true, let event = await events.next() {
            switch event {
            case .session(let signal):
                seen += 1
                if options.json {
                    printJSON(Self.json(signal.signal.name, signal.arguments))
                } else {
                    Terminal.line(Self.text(signal.signal.name, signal.arguments))
                }
            case .interrupted:
                return ClientExit.success
            case .signal, .key, .inputClosed, .tick, .alertCompleted, .chunk, .passThruFinished, .jobState, .jobFinished:
                continue
            case .serviceGone(let name):
                Terminal.error("earshot: \(name) left the bus; still watching")
            }
        }
        return ClientExit.success
    }

    /// The argument names of each signal, from the contract.
    static let argumentNames: [String: [String]] = Dictionary(uniqueKeysWithValues: SessionContract.Manager.interface.signals.map {
        ($0.name, $0.arguments.map(\.name))
    })

    static func json(_ member: String, _ body: [DBusValue]) -> JSONValue {
        let names = argumentNames[member] ?? []
        var members: [(String, JSONValue)] = [("signal", .string(member))]
        for (index, value) in body.enumerated() {
            members.append((index < names.count ? names[index] : "arg\(index)", JSONValue(value)))
        }
        return .object(members)
    }

    static func text(_ member: String, _ body: [DBusValue]) -> String {
        switch (member, body.count) {
        case (SessionContract.Manager.routeChanged.name, 2):
            let previous = body[1].stringKeyedValue ?? [:]
            let route = previous.keys.sorted().map { "\($0) \(ValueText.visible(ValueText.describe(previous[$0]!)))" }.joined(separator: ", ")
            return "\(member) \(ValueText.describe(body[0]))" + (route.isEmpty ? "" : " (previous route: \(route))")
        case (SessionContract.Manager.reapplied.name, 3):
            let ok = body[1].boolValue ?? false
            return "\(member) \(ValueText.describe(body[0])) " + (ok ? "ok" : "failed: \(ValueText.describe(body[2]))")
        default:
            return ([member] + body.map(ValueText.describe)).joined(separator: " ")
        }
    }
}
