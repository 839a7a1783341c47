import ArgumentParser
import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus

/// `earshot alert`: presents an alert, and with `--wait` waits for how it ended.
struct AlertCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "alert",
        abstract: "Present an alert (Alerts1.\(AlertsContract.Manager.presentAlert.name)), optionally waiting for its end.",
        discussion: """
            Buttons get the ids 1, 2, … in the order given. Without --wait the alert outlives \
            this command (\(AlertsContract.Manager.Keys.outliveOwner.name)) and its object path is printed. With --wait the command \
            stays until the alert's Completed and prints the result code, the reason, the \
            pressed button's label and, when REJECTED, the time to try again in ms; Ctrl-C \
            cancels the alert.

            Exit status: 0 presented (without --wait) or SUCCESS/WARNINGS (with --wait); 4 any \
            other result code (REJECTED, ABORTED, …); 3 org.earshot.Alerts1 is not running; 1 an \
            error reply (e.g. \(EarshotErrorName.invalidData.name) for text over 500 characters); 2 a usage \
            error (an unknown priority among them).
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

    @Option(help: ArgumentHelp("NORMAL, COMMUNICATION, NAVIGATION, VOICECOM or EMERGENCY (any case).", valueName: "priority"))
    var priority: Alert.Priority?

    @Option(help: ArgumentHelp("Seconds the alert stays without buttons (3..10).", valueName: "seconds"))
    var timeout: Double?

    @Flag(name: .customLong("tone"), help: "Play a tone before the spoken text.")
    var playTone = false

    @Flag(help: "Wait for the alert to complete and report how.")
    var wait = false

    var alert: Alert {
        var alert = Alert(text: text, secondaryText: secondary, audio: speak.map { [.text($0)] } ?? [],
                          softButtons: buttons.enumerated().map { index, label in
                              Alert.SoftButton(id: UInt16(truncatingIfNeeded: index + 1), text: label)
                          })
        alert.tertiaryText = tertiary
        alert.priority = priority ?? .normal
        alert.timeout = timeout
        alert.playTone = playTone
        // Without --wait this command leaves at once; the alert should not end with it.
        alert.outliveOwner = !wait
        return alert
    }

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        try await client.require(.alerts)
        guard wait else {
            let path = try await present(client).path
            if options.json {
                printJSON(.object([("alert", .string(path.rawValue))]))
            } else {
                Terminal.line(path.rawValue)
            }
            return ClientExit.success
        }

        let events = ClientEvents()
        defer { events.stop() }
        try await events.watch(.alerts, on: client)
        // From here Ctrl-C is an event: one that comes during the call cancels the alert
        // once its path is known.
        events.catchInterrupts()
        let presented = try await present(client)
        events.forward(presented)
        var cancelled = false
        while let event = await events.next() {
            switch event {
            case .alertCompleted(.success(let result)):
                report(path: presented.path, result)
                return ClientExit.isSuccessful(result.resultCode.rawValue) ? ClientExit.success : ClientExit.unsuccessful
            case .alertCompleted(.failure(let error)):
                throw ClientFailure.from(error, service: BusService.alerts.name)
            case .interrupted:
                if cancelled { return ClientExit.interrupted }
                cancelled = true
                Terminal.error("earshot: cancelling \(presented.path.rawValue) (Ctrl-C again to quit at once)")
                try? await presented.cancel()
            case .signal, .key, .inputClosed, .tick, .chunk, .passThruFinished, .jobState, .jobFinished, .session:
                continue
            case .serviceGone(let name):
                throw .notRunning(name)
            }
        }
        throw .failed("the wait for \(presented.path.rawValue) ended without its Completed")
    }

    func present(_ client: BusClient) async throws(ClientFailure) -> PresentedAlert {
        try await client.with(.alerts) { [alert] in try await $0.alerts.show(alert) }
    }

    func report(path: ObjectPath, _ result: AlertResult) {
        let code = result.resultCode.rawValue
        let label = result.pressedButton.flatMap { id in id >= 1 && Int(id) <= buttons.count ? buttons[Int(id) - 1] : nil }
        if options.json {
            var members: [(String, JSONValue)] = [("alert", .string(path.rawValue)), ("resultCode", .string(code)),
                                                  ("success", .bool(result.success)), ("reason", result.reason.map { .string($0.rawValue) } ?? .null)]
            members.append(("pressedButton", result.pressedButton.map { .uint(UInt64($0)) } ?? .null))
            members.append(("buttonLabel", label.map(JSONValue.string) ?? .null))
            members.append(("tryAgainTimeMs", result.tryAgainTimeMs.map { .uint(UInt64($0)) } ?? .null))
            members.append(("warnings", .array(result.warnings.map(JSONValue.string))))
            printJSON(.object(members))
            return
        }
        Terminal.line(code + (result.reason.map { " (\($0))" } ?? ""))
        if let pressed = result.pressedButton { Terminal.line("button: \(pressed)" + (label.map { " \($0)" } ?? "")) }
        if let tryAgain = result.tryAgainTimeMs, code == "REJECTED" || tryAgain > 0 { Terminal.line("try again in: \(tryAgain) ms") }
        for warning in result.warnings { Terminal.line("warning: \(warning)") }
    }
}

extension Alert.Priority: ExpressibleByArgument {
    public init?(argument: String) { self.init(rawValue: argument.uppercased()) }
}
