import AlertsCore
import EarshotContract
import EarshotDBus
import Logging

/// Shows alerts on the desktop through `org.freedesktop.Notifications`: summary and body
/// from the laid-out lines, actions from the soft buttons, the expire timeout from the
/// alert's. `ActionInvoked` presses the button; `NotificationClosed` completes the alert as
/// the desktop says (expired → timeout, dismissed by the user → dismissed); a completed
/// alert's notification is closed.
final class NotificationsBridge: AlertObserver {
    static let busName = "org.freedesktop.Notifications"
    static let path: ObjectPath = "/org/freedesktop/Notifications"

    /// `NotificationClosed` reasons of the Desktop Notifications Specification.
    enum ClosedReason: UInt32 {
        case expired = 1, dismissed = 2, closedByCall = 3, undefined = 4
    }

    private struct State {
        /// Notification id → alert, while both are open.
        var shown: [UInt32: AlertObject] = [:]
        /// Alerts whose Notify is still on its way.
        var pending: Set<UInt64> = []
        /// Alerts that completed while their Notify was on its way.
        var completedEarly: Set<UInt64> = []
    }

    private let service: AlertsService
    private let state = Locked(State())
    private let task = Locked<Task<Void, Never>?>(nil)
    private var connection: DBusConnection { service.connection }
    private var logger: Logger { service.logger }

    init(service: AlertsService) {
        self.service = service
    }

    func start() async throws {
        let signals = try await connection.subscribe(MatchRule(sender: Self.busName, interface: Self.busName))
        task.withLock { $0 = Task { [weak self] in
            for await signal in signals { self?.received(signal) }
        } }
        logger.info("alerts are also shown through \(Self.busName)")
    }

    func presented(_ alert: AlertObject) {
        guard !alert.request.speechOnly else { return }
        state.withLock { _ = $0.pending.insert(alert.id) }
        Task { await notify(alert) }
    }

    func completed(_ alert: AlertObject) {
        let id = state.withLock { s -> UInt32? in
            if s.pending.contains(alert.id) {
                s.completedEarly.insert(alert.id)
                return nil
            }
            guard let (id, _) = s.shown.first(where: { $0.value === alert }) else { return nil }
            s.shown.removeValue(forKey: id)
            return id
        }
        if let id { Task { await close(id) } }
    }

    private func notify(_ alert: AlertObject) async {
        let summary = alert.lines.first ?? ""
        let body = alert.lines.dropFirst().joined(separator: "\n")
        let actions = alert.request.softButtons.flatMap { [String($0.id), $0.text.isEmpty ? "Button \($0.id)" : $0.text] }
        let urgency: UInt8 = alert.request.priority == .emergency ? 2 : (alert.request.priority == .normal ? 1 : 1)
        let expire = Int32(clamping: alert.durationMs)
        do {
            let reply = try await connection.call(destination: Self.busName, path: Self.path, interface: Self.busName, member: "Notify", [
                .string("Earshot"), .uint32(0), .string(alert.request.icon), .string(summary), .string(body),
                .strings(actions), .vardict(["urgency": .byte(urgency)]), .int32(expire),
            ], timeout: .seconds(5))
            guard let id = reply.first?.uint32Value else { return }
            let closeNow = state.withLock { s -> Bool in
                s.pending.remove(alert.id)
                if s.completedEarly.remove(alert.id) != nil { return true }
                s.shown[id] = alert
                return false
            }
            if closeNow { await close(id) }
        } catch {
            state.withLock { s in
                s.pending.remove(alert.id)
                s.completedEarly.remove(alert.id)
            }
            logger.warning("alert \(alert.id): the desktop did not show it: \(error)")
        }
    }

    private func close(_ id: UInt32) async {
        _ = try? await connection.call(destination: Self.busName, path: Self.path, interface: Self.busName,
                                       member: "CloseNotification", [.uint32(id)], timeout: .seconds(5))
    }

    private func received(_ signal: DBusMessage) {
        guard let id = signal.body.first?.uint32Value else { return }
        switch signal.member {
        case "ActionInvoked":
            guard let alert = state.withLock({ $0.shown[id] }), let key = signal.body.dropFirst().first?.stringValue,
                  let button = UInt16(key), let pressed = alert.request.softButtons.first(where: { $0.id == button }) else { return }
            try? service.act(on: alert, call: AlertsContract.Alert.pressButton.name, presentedOnly: true) { queue, now in
                queue.pressButton(alert.id, button: button, action: pressed.systemAction, now: now)
            }
        case "NotificationClosed":
            guard let alert = state.withLock({ $0.shown.removeValue(forKey: id) }) else { return }
            switch signal.body.dropFirst().first?.uint32Value.flatMap(ClosedReason.init(rawValue:)) {
            case .expired:
                try? service.act(on: alert, call: "NotificationClosed", presentedOnly: true) { queue, now in
                    queue.expire(alert.id, now: now)
                }
            case .dismissed:
                try? service.act(on: alert, call: "NotificationClosed", presentedOnly: true) { queue, now in
                    queue.dismiss(alert.id, now: now)
                }
            default:
                break
            }
        default:
            break
        }
    }
}
