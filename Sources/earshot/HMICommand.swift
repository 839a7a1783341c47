import ArgumentParser
import EarshotClient
import EarshotContract
import EarshotDBus

/// `earshot hmi`: a terminal HMI for the alert being presented and the active microphone
/// pass-thru, with keys for the user's actions.
struct HMICommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "hmi",
        abstract: "A terminal HMI: shows the current alert and the active pass-thru, and presses their buttons.",
        discussion: """
            Keys: 1-4 press the alert's soft buttons (Alert.\(AlertsContract.Alert.pressButton.name)), x dismisses the alert \
            (Alert.Dismiss); d, c and r end the microphone pass-thru with Done, Cancel or Retry; \
            q or Ctrl-C quits. These are the HMI user's actions: the services allow them to \
            root and to their own user (on the session bus, the same user). The screen follows \
            the services' PropertiesChanged and is refreshed twice a second; a service that is \
            not on the bus is shown as such until it comes. With --json each change is printed \
            as one JSON line instead of a screen.

            Exit status: 0 after q or Ctrl-C; 1 no bus; 2 a usage error.
            """)

    @OptionGroup var options: ClientOptions

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        let events = ClientEvents()
        defer { events.stop() }
        for service in [BusService.alerts, .capture] {
            do {
                events.forward(try await client.connection.subscribe(MatchRule(sender: service.name, pathNamespace: service.path)))
            } catch {
                throw ClientFailure.from(error)
            }
        }
        events.catchInterrupts()
        let terminal = TerminalMode(screen: !options.json)
        defer { terminal.restore() }
        events.readKeys()
        events.tick(every: .milliseconds(500))

        var snapshot = await HMISnapshot.read(client)
        var message = ""
        var shown = ""
        func draw() {
            let text = options.json ? (snapshot.json.text + "\n") : HMIScreen.frame(HMIScreen.lines(snapshot, message: message))
            guard text != shown else { return }
            shown = text
            Terminal.raw(text)
        }
        draw()
        while let event = await events.next() {
            switch event {
            case .key(let key):
                if key == UInt8(ascii: "q") { return ClientExit.success }
                if let result = await act(on: key, snapshot: snapshot, client: client) { message = result }
            case .interrupted:
                return ClientExit.success
            case .signal, .tick, .serviceGone, .inputClosed, .alertCompleted, .chunk, .passThruFinished, .jobState, .jobFinished, .session:
                break
            }
            snapshot = await HMISnapshot.read(client)
            draw()
        }
        return ClientExit.success
    }

    /// Performs the action of `key`; returns what to tell the user (nil: not a key of ours).
    func act(on key: UInt8, snapshot: HMISnapshot, client: BusClient) async -> String? {
        let character = Character(Unicode.Scalar(key))
        switch character {
        case "1", "2", "3", "4":
            guard let alert = snapshot.alert else { return "no alert to press \(character) on" }
            let index = Int(key - UInt8(ascii: "1"))
            guard index < alert.buttons.count else { return "the alert has no button \(character)" }
            let button = alert.buttons[index]
            let outcome = switch button.action {
            case "KEEP_CONTEXT": "; the alert stays (KEEP_CONTEXT)"
            case "STEAL_FOCUS": "; its app is asked to come forward (STEAL_FOCUS)"
            default: ""
            }
            return await perform("pressed [\(character)] \(button.text)\(outcome)") {
                try await client.earshot.alerts.alert(at: alert.path).pressButton(button.id)
            }
        case "x":
            guard let alert = snapshot.alert else { return "no alert to dismiss" }
            return await perform("dismissed \(alert.path.rawValue)") {
                try await client.earshot.alerts.alert(at: alert.path).dismiss()
            }
        case "d", "c", "r":
            guard let passThru = snapshot.passThru else { return "no pass-thru to end" }
            let member = (character == "d" ? CaptureContract.PassThru.done : character == "c" ? CaptureContract.PassThru.cancel
                : CaptureContract.PassThru.retry).name
            let control = client.earshot.capture.passThru(at: passThru.path)
            return await perform("\(member) \(passThru.path.rawValue)") {
                switch character {
                case "d": try await control.done()
                case "c": try await control.cancel()
                default: try await control.retry()
                }
            }
        default:
            return nil
        }
    }

    func perform(_ what: String, _ action: () async throws -> Void) async -> String {
        do {
            try await action()
            return what
        } catch {
            return "\(what): failed: \(ClientFailure.from(error).description)"
        }
    }
}
