import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// `--display notifications` against python-dbusmock's notification daemon on the bus.
@Suite struct NotificationsBridgeTests {
    static let notifications = "org.freedesktop.Notifications"
    static let mockPath: ObjectPath = "/org/freedesktop/Notifications"
    static let python = "/usr/bin/python3"

    /// The calls the mock has received: (method, arguments). (The mock is no Earshot service:
    /// it is spoken to raw.)
    static func calls(_ f: AlertsFixture) async throws -> [(String, [DBusValue])] {
        let reply = try await f.client.call(destination: notifications, path: mockPath, interface: "org.freedesktop.DBus.Mock",
                                            member: "GetCalls")
        return (reply.first?.arrayValue ?? []).compactMap { call in
            guard case .structure(let fields) = call, fields.count == 3, let method = fields[1].stringValue else { return nil }
            return (method, (fields[2].arrayValue ?? []).map { $0.variantValue ?? $0 })
        }
    }

    /// Waits until the mock has received `count` calls of `method`; returns them.
    static func waitForCalls(_ f: AlertsFixture, _ method: String, count: Int) async throws -> [[DBusValue]] {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let matching = try await calls(f).filter { $0.0 == method }.map(\.1)
            if matching.count >= count { return matching }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw HarnessError("the mock did not receive \(count) \(method) call(s)")
    }

    static func emit(_ f: AlertsFixture, _ signal: String, _ signature: String, _ arguments: [DBusValue]) async throws {
        _ = try await f.client.call(destination: notifications, path: mockPath, interface: "org.freedesktop.DBus.Mock",
                                    member: "EmitSignal", [.string(notifications), .string(signal), .string(signature),
                                                           .array(.variant, arguments.map(DBusValue.variant))])
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/dbusmock")))
    func alertsAppearAsNotificationsAndDesktopActionsComplete() async throws {
        var mock: ServiceProcess?
        try await AlertsFixture.with(arguments: ["--display", "notifications"], before: { bus, _ in
            mock = try await ServiceProcess(Self.python, arguments: ["-m", "dbusmock", "--template", "notification_daemon"],
                                            bus: bus, busName: Self.notifications, passAddress: false)
        }) { f in
            defer { mock?.stop() }
            let completions = try await f.completions()
            let call = try await f.present(Alert(text: "Call from Ann", secondaryText: "mobile",
                                                 softButtons: [.labelled(1, "Answer"), .labelled(2, "Decline")]))
            let notify = try #require(try await Self.waitForCalls(f, "Notify", count: 1).first)
            #expect(notify[3] == .string("Call from Ann"))
            #expect(notify[4] == .string("mobile"))
            #expect(notify[5] == .strings(["1", "Answer", "2", "Decline"]))
            #expect(notify[7] == .int32(60_000))
            // The mock numbers notifications from 1.
            try await Self.emit(f, "ActionInvoked", "us", [.uint32(1), .string("2")])
            let pressed = try await AlertsFixture.completion(of: call, in: completions)
            #expect(pressed.success && pressed.reason == .button && pressed.pressedButton == 2)
            // The finished alert's notification is closed.
            let closed = try await Self.waitForCalls(f, "CloseNotification", count: 1)
            // The mock declares the id as i where the specification says u.
            #expect(closed.first?.first?.integerValue == 1)

            let info = try await f.present(.text("Traffic ahead") { $0.timeout = 8 })
            let second = try await Self.waitForCalls(f, "Notify", count: 2)
            #expect(second[1][7] == .int32(8000))
            try await Self.emit(f, "NotificationClosed", "uu", [.uint32(2), .uint32(2)])
            let dismissed = try await AlertsFixture.completion(of: info, in: completions)
            #expect(dismissed.success && dismissed.reason == .dismissed)
        }
        await mock?.shutdown()
    }
}
