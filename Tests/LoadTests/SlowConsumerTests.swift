import CDBus
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

private typealias SessionManager = SessionContract.Manager
private typealias AlertsManager = AlertsContract.Manager

/// A raw libdbus connection that matches every signal and never reads its socket.
final class StalledSubscriber {
    let pointer: OpaquePointer

    init(address: String) throws {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let connection = dbus_connection_open_private(address, &error) else { throw HarnessError("cannot open \(address)") }
        pointer = connection
        guard dbus_bus_register(connection, &error) != 0 else { throw HarnessError("cannot register with the bus") }
        dbus_bus_add_match(connection, "type='signal'", &error)
        guard dbus_error_is_set(&error) == 0 else { throw HarnessError("AddMatch failed") }
    }

    deinit {
        dbus_connection_close(pointer)
        dbus_connection_unref(pointer)
    }
}

/// A client that subscribes to every signal and then stops reading must cost the services
/// nothing: they hand each signal to the bus once and queue nothing per peer (what the
/// stalled client has not read waits in the bus daemon, up to the daemon's own limit), so
/// their memory stays flat and other clients are answered as quickly as ever. (In the
/// load suite, which runs one test at a time, so that timings are not shared.)
extension LoadTests {
    @Test func aStalledSubscriberCostsTheServicesNothing() async throws {
        try await ServiceStack.with(["earshot-session", "earshot-alerts"]) { stack in
            let session = try #require(stack.process("earshot-session"))
            let alerts = try #require(stack.process("earshot-alerts"))
            let stalled = try StalledSubscriber(address: stack.bus.address)
            let manager: ObjectPath = "/org/earshot/Session1"

            // A warm-up, then the measured stretch: every call changes the session state
            // (PropertiesChanged) or completes an alert (Completed), all broadcast.
            func churn(_ rounds: Int) async throws -> [Double] {
                var latencies: [Double] = []
                for round in 0..<rounds {
                    let start = monotonicNanoseconds()
                    let category = round % 2 == 0 ? "playback" : "ambient"
                    _ = try await stack.client.call(destination: SessionContract.busName, path: manager,
                                                    interface: SessionManager.interface.name, member: SessionManager.setDesiredState.name,
                                                    [.vardict([SessionManager.Keys.category.name: .string(category)])])
                    latencies.append(Double(monotonicNanoseconds() - start) / 1e6)
                    if round % 10 == 0 {
                        let alert = try await stack.client.call(destination: AlertsContract.busName, path: "/org/earshot/Alerts1",
                                                                interface: AlertsManager.interface.name,
                                                                member: AlertsManager.presentAlert.name,
                                                                [.vardict([AlertsManager.Keys.text.name: .string("Slow consumer \(round)")])])
                        if let path = alert.first?.objectPathValue {
                            _ = try? await stack.client.call(destination: AlertsContract.busName, path: path,
                                                             interface: AlertsContract.Alert.interface.name,
                                                             member: AlertsContract.Alert.cancel.name)
                        }
                    }
                }
                return latencies
            }
            _ = try await churn(200)
            try await Task.sleep(for: .seconds(11))  // services return free memory within 10 s of their last call
            let sessionBefore = try ProcessSample.take(session.pid).rssKiB
            let alertsBefore = try ProcessSample.take(alerts.pid).rssKiB
            let latencies = try await churn(3000).sorted()
            try await Task.sleep(for: .seconds(11))
            let sessionAfter = try ProcessSample.take(session.pid).rssKiB
            let alertsAfter = try ProcessSample.take(alerts.pid).rssKiB
            let p99 = latencies[latencies.count * 99 / 100]
            print("with a stalled subscriber: \(SessionContract.Manager.setDesiredState.name) p50 \(latencies[latencies.count / 2]) ms, p99 \(p99) ms; "
                  + "earshot-session VmRSS \(sessionBefore / 1024) → \(sessionAfter / 1024) MiB, "
                  + "earshot-alerts \(alertsBefore / 1024) → \(alertsAfter / 1024) MiB")
            #expect(Int(sessionAfter) - Int(sessionBefore) < 8 * 1024)
            #expect(Int(alertsAfter) - Int(alertsBefore) < 8 * 1024)
            // Not stalled: a call that waited on the stalled client would take seconds;
            // an fsynced SetDesiredState on a busy two-core machine takes up to a few
            // hundred milliseconds.
            #expect(p99 < 1000, "p99 \(p99) ms")
            #expect(session.isRunning && alerts.isRunning)
            withExtendedLifetime(stalled) {}
        }
    }
}
