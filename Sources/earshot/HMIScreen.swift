import Foundation

/// The terminal HMI's screen: the alert with its numbered buttons, the microphone with
/// its prompt and progress, the keys, and the outcome of the last key press.
enum HMIScreen {
    static let rule = String(repeating: "─", count: 60)

    /// What a button does besides ending the alert: KEEP_CONTEXT keeps it up, STEAL_FOCUS
    /// also brings its app forward.
    static func mark(_ action: String) -> String {
        switch action {
        case "KEEP_CONTEXT": " (stays)"
        case "STEAL_FOCUS": " (→ app)"
        default: ""
        }
    }

    static func lines(_ snapshot: HMISnapshot, message: String) -> [String] {
        var lines = ["Earshot HMI    keys: 1-4 button  x dismiss  d done  c cancel  r retry  q quit", rule]
        if !snapshot.alertsRunning {
            lines.append("ALERT       org.earshot.Alerts1 is not running")
        } else if let alert = snapshot.alert {
            lines.append("ALERT       \(alert.path.rawValue)  \(alert.priority) \(alert.state)"
                         + (alert.showWaitIndicator ? "  (waiting…)" : ""))
            lines += alert.lines.map { "  " + $0 }
            if !alert.buttons.isEmpty {
                lines.append("  " + alert.buttons.enumerated().map { "[\($0.offset + 1)] \($0.element.text)\(mark($0.element.action))" }
                    .joined(separator: "   ") + "    [x] dismiss")
            } else {
                lines.append("  [x] dismiss")
            }
        } else {
            lines.append("ALERT       none")
        }
        lines.append(rule)
        if !snapshot.captureRunning {
            lines.append("MICROPHONE  org.earshot.Capture1 is not running")
        } else if let passThru = snapshot.passThru {
            lines.append("MICROPHONE  \(passThru.path.rawValue)  \(passThru.state)")
            for text in [passThru.displayText1, passThru.displayText2] where !text.isEmpty { lines.append("  " + text) }
            let layout = passThru.channels == 2 ? "stereo" : passThru.channels == 1 ? "mono" : "\(passThru.channels) channels"
            lines.append(String(format: "  %.1f s of %.1f s", passThru.seconds, Double(passThru.maxDurationMs) / 1000)
                         + "   \(passThru.samplingRate) Hz \(passThru.bitsPerSample)-bit \(layout)")
            lines.append("  [d] done   [c] cancel   [r] retry")
        } else {
            lines.append("MICROPHONE  idle")
        }
        lines.append(rule)
        lines.append(message.isEmpty ? " " : "> " + message)
        return lines
    }

    /// The whole screen, drawn from the top-left corner over what was there.
    static func frame(_ lines: [String]) -> String {
        "\u{1B}[H\u{1B}[2J" + lines.joined(separator: "\r\n") + "\r\n"
    }
}
