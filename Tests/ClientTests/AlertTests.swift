import ContractCore
import EarshotContract
import EarshotDBus
import Foundation
import Glibc
import Testing

@Suite struct AlertTests {
    private typealias Manager = AlertsContract.Manager
    private typealias Alert = AlertsContract.Alert

    static let alerts = AlertsContract.busName
    static let alert = AlertsContract.Alert.interface.name

    @Test func waitReportsTheButtonTheUserPressed() async throws {
        try await ClientFixture.with(["earshot-alerts"]) { fixture in
            let running = try fixture.start(["alert", "Call from Ann", "--secondary", "mobile", "--button", "Answer",
                                             "--button", "Decline", "--wait"])
            let path = try await fixture.waitForObject(Self.alerts, Manager.current.name)
            #expect(try await fixture.property(Self.alerts, path, Self.alert, Alert.lines.name) == .strings(["Call from Ann", "mobile"]))
            // The HMI's user presses the second button (the same uid may, on a session bus).
            _ = try await fixture.client.call(destination: Self.alerts, path: path, interface: Self.alert, member: Alert.pressButton.name,
                                              [.uint16(2)])
            let result = try await running.wait()
            #expect(result.status == 0, "\(result)")
            #expect(result.lines == ["SUCCESS (button)", "button: 2 Decline"], "\(result)")
        }
    }

    @Test func waitWithJSONAndCtrlCCancels() async throws {
        try await ClientFixture.with(["earshot-alerts"]) { fixture in
            let running = try fixture.start(["alert", "Keep me", "--button", "OK", "--wait", "--json"])
            let path = try await fixture.waitForObject(Self.alerts, Manager.current.name)
            running.signal(SIGINT)
            let result = try await running.wait()
            #expect(result.status == 4, "\(result)")
            let outcome = try result.object()
            #expect(outcome["alert"] as? String == path.rawValue)
            #expect(outcome["resultCode"] as? String == "ABORTED")
            #expect(outcome["success"] as? Bool == false)
            #expect(outcome["buttonLabel"] is NSNull)
            #expect(try await fixture.property(Self.alerts, path, Self.alert, Alert.state.name) == .string("finished"))
        }
    }

    @Test func withoutWaitTheAlertOutlivesTheCommand() async throws {
        try await ClientFixture.with(["earshot-alerts"]) { fixture in
            let result = try await fixture.earshot(["alert", "Fuel low", "--priority", "navigation", "--json"])
            #expect(result.status == 0, "\(result)")
            let path = try ObjectPath(try #require(try result.object()["alert"] as? String))
            #expect(try await fixture.property(Self.alerts, path, Self.alert, Alert.state.name) == .string("presenting"))
            #expect(try await fixture.property(Self.alerts, path, Self.alert, Alert.priority.name) == .string("NAVIGATION"))

            let plain = try await fixture.earshot(["alert", "Second"])
            #expect(plain.status == 0)
            #expect(plain.lines.count == 1 && plain.lines[0].hasPrefix("/org/earshot/Alerts1/Alert/"), "\(plain)")
        }
    }

    /// An unknown priority is a usage error; a rule the contract checks is its error reply,
    /// from the client's check before anything is sent.
    @Test func badValuesAreRefusedBeforeAnyAlert() async throws {
        try await ClientFixture.with(["earshot-alerts"]) { fixture in
            let result = try await fixture.earshot(["alert", "Hello", "--priority", "loud", "--wait"])
            #expect(result.status == 2, "\(result)")
            #expect(result.stderr.contains("'loud'") && result.stderr.contains("--priority"), "\(result)")
            #expect(result.stdout.isEmpty)
            let long = try await fixture.earshot(["alert", String(repeating: "x", count: 501), "--wait"])
            #expect(long.status == 1, "\(long)")
            #expect(long.stderr.hasPrefix("earshot: \(EarshotErrorName.invalidData.name): Text"), "\(long)")
            #expect(try await fixture.property(Self.alerts, "/org/earshot/Alerts1", Self.alerts, Manager.current.name) == .objectPath("/"))
        }
    }
}
