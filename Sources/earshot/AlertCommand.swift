import ArgumentParser
import EarshotContract
import EarshotDBus

/// `earshot alert`: presents an alert, and with `--wait` waits for how it ended.
struct AlertCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "alert",
        abstract: "Present an alert (Alerts1.PresentAlert), optionally waiting for its end.",
        discussion: """
            Buttons get the ids 1, 2, … in the order given. Without --wait the alert outlives \
            this command (OutliveOwner) and its object path is printed. With --wait the command \
            stays until the alert's Completed and prints the result code, the reason, the \
            pressed button's label and, when REJECTED, the time to try again in ms; Ctrl-C \
            cancels the alert.

            Exit status: 0 presented (without --wait) or SUCCESS/WARNINGS (with --wait); 4 any \
            other result code (REJECTED, ABORTED, …); 3 org.earshot.Alerts1 is not running; 1 an \
            error reply (e.g. org.earshot.Error.InvalidData for a bad priority); 2 a usage error.
            """)

    @OptionGroup var options: ClientOptions

    @Argument(help: "The alert's first line.")
    var text: String

    @Option(help: ArgumentHelp("The second line.", valueName: "text"))
    var secondary: String?

    @Option(help: ArgumentHelp("The third line.", valueName: "text"))
    var tertiary: String?

    @Option(name: .customLong("button"), help: ArgumentHelp("A soft button's label (repeat for up to 4).", valueName: "label"))
    var buttons: [String] = []

    @Option(help: ArgumentHelp("Words spoken with the alert.", valueName: "text"))
    var speak: String?

    @Option(help: ArgumentHelp("NORMAL, COMMUNICATION, NAVIGATION, VOICECOM or EMERGENCY.", valueName: "priority"))
    var priority: String?

    @Option(help: ArgumentHelp("Seconds the alert stays without buttons (3..10).", valueName: "seconds"))
    var timeout: Double?

    @Flag(name: .customLong("tone"), help: "Play a tone before the spoken text.")
    var playTone = false

    @Flag(help: "Wait for the alert to complete and report how.")
    var wait = false

    var request: [String: DBusValue] {
        var alert: [String: DBusValue] = ["Text": .string(text)]
        if let secondary { alert["SecondaryText"] = .string(secondary) }
        if let tertiary { alert["TertiaryText"] = .string(tertiary) }
        if !buttons.isEmpty {
            alert["SoftButtons"] = .vardicts(buttons.enumerated().map { index, label in
                ["Id": .uint16(UInt16(truncatingIfNeeded: index + 1)), "Text": .string(label)]
            })
        }
        if let speak { alert["Audio"] = .array(.structure([.string, .string]), [.structure([.string("TEXT"), .string(speak)])]) }
        if let priority { alert["Priority"] = .string(priority.uppercased()) }
        if let timeout { alert["Timeout"] = .double(timeout) }
        if playTone { alert["PlayTone"] = .boolean(true) }
        // Without --wait this command leaves at once; the alert should not end with it.
        if !wait { alert["OutliveOwner"] = .boolean(true) }
        return alert
    }

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        try await client.require(.alerts)
        guard wait else {
            let path = try await present(client)
            if options.json {
                printJSON(.object([("alert", .string(path.rawValue))]))
            } else {
                Terminal.line(path.rawValue)
            }
            return ClientExit.success
        }

        let events = ClientEvents()
        defer { events.stop() }
        events.forward(try await client.subscribe(.alerts, interface: RequestInterface.alert, member: AlertsContract.Alert.completed.name))
        try await events.watch(.alerts, on: client)
        // From here Ctrl-C is an event: one that comes during the call cancels the alert
        // once its path is known.
        events.catchInterrupts()
        let path = try await present(client)
        var cancelled = false
        while let event = await events.next() {
            switch event {
            case .signal(let message):
                guard message.path == path, message.body.count == 3 else { continue }
                let code = message.body[1].stringValue ?? ""
                report(path: path, success: message.body[0].boolValue ?? false, code: code,
                       info: message.body[2].stringKeyedValue ?? [:])
                return ClientExit.isSuccessful(code) ? ClientExit.success : ClientExit.unsuccessful
            case .interrupted:
                if cancelled { return ClientExit.interrupted }
                cancelled = true
                Terminal.error("earshot: cancelling \(path.rawValue) (Ctrl-C again to quit at once)")
                _ = try? await client.call(.alerts, AlertsContract.Alert.cancel.name, path: path, interface: RequestInterface.alert)
            case .key, .inputClosed, .tick:
                continue
            case .serviceGone(let name):
                throw .notRunning(name)
            }
        }
        throw .failed("the wait for \(path.rawValue) ended without its Completed")
    }

    func present(_ client: BusClient) async throws(ClientFailure) -> ObjectPath {
        let reply = try await client.call(.alerts, AlertsContract.Manager.presentAlert.name, [.vardict(request)])
        guard let path = reply.first?.objectPathValue else { throw .failed("PresentAlert replied \(reply)") }
        return path
    }

    func report(path: ObjectPath, success: Bool, code: String, info: [String: DBusValue]) {
        let reason = info["Reason"]?.stringValue
        let pressed = info["PressedButton"]?.uint16Value
        let label = pressed.flatMap { id in id >= 1 && Int(id) <= buttons.count ? buttons[Int(id) - 1] : nil }
        let tryAgain = info["TryAgainTimeMs"]?.uint32Value
        let warnings = info["Warnings"]?.stringArrayValue ?? []
        if options.json {
            var members: [(String, JSONValue)] = [("alert", .string(path.rawValue)), ("resultCode", .string(code)),
                                                  ("success", .bool(success)), ("reason", reason.map(JSONValue.string) ?? .null)]
            members.append(("pressedButton", pressed.map { .uint(UInt64($0)) } ?? .null))
            members.append(("buttonLabel", label.map(JSONValue.string) ?? .null))
            members.append(("tryAgainTimeMs", tryAgain.map { .uint(UInt64($0)) } ?? .null))
            members.append(("warnings", .array(warnings.map(JSONValue.string))))
            printJSON(.object(members))
            return
        }
        Terminal.line(code + (reason.map { " (\($0))" } ?? ""))
        if let pressed { Terminal.line("button: \(pressed)" + (label.map { " \($0)" } ?? "")) }
        if let tryAgain, code == "REJECTED" || tryAgain > 0 { Terminal.line("try again in: \(tryAgain) ms") }
        for warning in warnings { Terminal.line("warning: \(warning)") }
    }
}
