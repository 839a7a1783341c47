import EarshotClient
import EarshotContract
import EarshotDBus

/// What the terminal HMI shows: the alert being presented and the active microphone
/// pass-thru, read from the services' properties.
struct HMISnapshot: Equatable {
    struct Alert: Equatable {
        var path: ObjectPath
        var lines: [String]
        /// `action`: the button's SDL `SystemAction`.
        var buttons: [(id: UInt16, text: String, action: String)]
        var priority: String
        var state: String
        var showWaitIndicator: Bool

        static func == (a: Alert, b: Alert) -> Bool {
            a.path == b.path && a.lines == b.lines && a.buttons.map(\.id) == b.buttons.map(\.id)
                && a.buttons.map(\.text) == b.buttons.map(\.text) && a.buttons.map(\.action) == b.buttons.map(\.action)
                && a.priority == b.priority && a.state == b.state
                && a.showWaitIndicator == b.showWaitIndicator
        }
    }

    struct PassThru: Equatable {
        var path: ObjectPath
        var state: String
        var displayText1: String
        var displayText2: String
        var samplingRate: UInt32
        var bitsPerSample: UInt32
        var channels: UInt32
        var maxDurationMs: UInt32
        var framesCaptured: UInt64

        var seconds: Double { samplingRate == 0 ? 0 : Double(framesCaptured) / Double(samplingRate) }
    }

    /// nil: the service is not on the bus.
    var alertsRunning = false
    var captureRunning = false
    var alert: Alert?
    var passThru: PassThru?

    /// Reads both services through the client, each object's properties in one call; a
    /// service that is absent (or answers with an error) shows as not running or idle rather
    /// than ending the HMI.
    static func read(_ client: BusClient) async -> HMISnapshot {
        typealias ButtonKeys = AlertsContract.Manager.SoftButtonKeys
        let earshot = client.earshot
        var snapshot = HMISnapshot()
        snapshot.alertsRunning = (try? await client.owner(of: .alerts)) != nil
        if snapshot.alertsRunning, let current = try? await earshot.alerts.read(.current),
           let values = try? await earshot.alerts.alert(at: current).readAll(), values[.state] != .finished {
            let buttons = (values[.softButtons] ?? []).map { button in
                (button[ButtonKeys.id]?.uint16Value ?? 0, button[ButtonKeys.text]?.stringValue ?? "",
                 button[ButtonKeys.systemAction]?.stringValue ?? "DEFAULT_ACTION")
            }
            snapshot.alert = Alert(path: current, lines: values[.lines] ?? [], buttons: buttons,
                                   priority: values[.priority]?.rawValue ?? "", state: values[.state]?.rawValue ?? "",
                                   showWaitIndicator: values[.showWaitIndicator] ?? false)
        }
        snapshot.captureRunning = (try? await client.owner(of: .capture)) != nil
        if snapshot.captureRunning, let active = try? await earshot.capture.read(.active),
           let values = try? await earshot.capture.passThru(at: active).readAll(), values[.state] != .finished {
            snapshot.passThru = PassThru(
                path: active, state: values[.state]?.rawValue ?? "",
                displayText1: values[.displayText1] ?? "", displayText2: values[.displayText2] ?? "",
                samplingRate: values[.samplingRate] ?? 0, bitsPerSample: values[.bitsPerSample] ?? 0,
                channels: values[.channels] ?? 0, maxDurationMs: values[.maxDuration] ?? 0,
                framesCaptured: values[.framesCaptured] ?? 0)
        }
        return snapshot
    }

    var json: JSONValue {
        let alert: JSONValue = self.alert.map { alert in
            .object([("path", .string(alert.path.rawValue)), ("state", .string(alert.state)), ("priority", .string(alert.priority)),
                     ("lines", .array(alert.lines.map(JSONValue.string))),
                     ("buttons", .array(alert.buttons.map {
                         .object([("id", .uint(UInt64($0.id))), ("text", .string($0.text)), ("systemAction", .string($0.action))])
                     })),
                     ("showWaitIndicator", .bool(alert.showWaitIndicator))])
        } ?? .null
        let passThru: JSONValue = self.passThru.map { passThru in
            .object([("path", .string(passThru.path.rawValue)), ("state", .string(passThru.state)),
                     ("displayText1", .string(passThru.displayText1)), ("displayText2", .string(passThru.displayText2)),
                     ("samplingRate", .uint(UInt64(passThru.samplingRate))), ("bitsPerSample", .uint(UInt64(passThru.bitsPerSample))),
                     ("channels", .uint(UInt64(passThru.channels))), ("maxDurationMs", .uint(UInt64(passThru.maxDurationMs))),
                     ("framesCaptured", .uint(passThru.framesCaptured))])
        } ?? .null
        return .object([("alertsRunning", .bool(alertsRunning)), ("captureRunning", .bool(captureRunning)),
                        ("alert", alert), ("passThru", passThru)])
    }
}
