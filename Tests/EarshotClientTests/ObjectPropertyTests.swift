import ContractCore
@testable import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// Every property the contract declares is readable through the client, typed, and the
/// writable ones writable; each object's list is its interface's, no more and no fewer.
@Suite struct ObjectPropertyTests {
    static func names(_ properties: [PropertyDeclaration]) -> [String] { properties.map(\.name).sorted() }

    /// Each object's list holds only its own properties (the compiler refuses a property typed
    /// for another object: `ListedProperty`), and equals its interface's declarations: the
    /// same names, the same interface, and writable exactly where the contract lets a client
    /// write.
    @Test func everyDeclaredPropertyHasATypedAccessor() {
        func entries<Object>(_ listed: [ListedProperty<Object>]) -> [(InterfaceDeclaration, PropertyDeclaration, Bool)] {
            listed.map { ($0.interface, $0.declaration, $0.writable) }
        }
        let lists: [(InterfaceDeclaration, [(InterfaceDeclaration, PropertyDeclaration, Bool)])] = [
            (CaptureContract.Manager.interface, entries(ObjectProperty<CaptureProxy, String>.declared)),
            (CaptureContract.PassThru.interface, entries(ObjectProperty<PassThruControl, String>.declared)),
            (AlertsContract.Manager.interface, entries(ObjectProperty<AlertsProxy, String>.declared)),
            (AlertsContract.Alert.interface, entries(ObjectProperty<AlertControl, String>.declared)),
            (PiecesContract.Manager.interface, entries(ObjectProperty<PiecesProxy, String>.declared)),
            (SessionContract.Manager.interface, entries(ObjectProperty<SessionProxy, String>.declared)),
            (SessionContract.Activation.interface, entries(ObjectProperty<SessionActivation, String>.declared)),
            (OrchestratorContract.Manager.interface, entries(ObjectProperty<OrchestratorProxy, String>.declared)),
            (OrchestratorContract.Job.interface, entries(ObjectProperty<JobControl, String>.declared)),
        ]
        let covered = Set(lists.map(\.0.name))
        let all = Set(EarshotContract.services.flatMap(\.interfaces).filter { !$0.properties.isEmpty }.map(\.name))
        #expect(covered == all)
        for (interface, listed) in lists {
            #expect(listed.map(\.1.name).sorted() == Self.names(interface.properties), "\(interface.name)")
            for (owner, declaration, writable) in listed {
                #expect(owner.name == interface.name, "\(declaration.name) is listed for \(interface.name) but read from \(owner.name)")
                let declared = interface.properties.first { $0.name == declaration.name }
                #expect(declared == declaration, "\(interface.name).\(declaration.name)")
                #expect(writable == declaration.access.writable, "\(interface.name).\(declaration.name): writable \(writable)")
            }
        }
    }

    /// Each manager's properties, and a pass-thru's and an alert's, read as their types from
    /// the real services; a written one is observed changing.
    @Test func propertiesAreReadWrittenAndObserved() async throws {
        try await ServiceStack.with(["earshot-capture", "earshot-alerts", "earshot-pieces", "earshot-session", "earshot-orchestrator"]) { stack in
            let earshot = Earshot(connection: stack.client)
            #expect(try await earshot.capture.read(.capabilities).isEmpty == false)
            #expect(try await earshot.capture.read(.device).isEmpty == false)
            #expect(try await earshot.capture.read(.active) == nil)
            #expect(try await earshot.capture.read(.endsAtMonotonicUs) == 0)
            #expect(try await earshot.alerts.read(.queueLength) == 0)
            #expect(try await earshot.alerts.read(.current) == nil)
            #expect(try await earshot.alerts.read(.displayLines) == 3)
            #expect(try await earshot.alerts.read(.capabilities)[AlertsContract.Manager.CapabilityKeys.displayLines.name] == .uint32(3))
            _ = try await earshot.alerts.read(.defaultTimeout)
            _ = try await earshot.alerts.read(.buttonTimeout)
            #expect(try await earshot.pieces.read(.count) == 0)
            for property in ObjectProperty<SessionProxy, String>.declared {
                _ = try await earshot.session.propertyAccess
                    .read(ObjectProperty<SessionProxy, DBusValue>(SessionContract.Manager.interface, property.declaration, decode: { $0 }))
            }
            #expect(try await earshot.session.read(.category).isEmpty == false)
            _ = try await earshot.session.read(.options)
            _ = try await earshot.session.read(.route)
            _ = try await earshot.session.read(.streams)
            _ = try await earshot.session.read(.mixer)
            let services = try await earshot.orchestrator.read(.services)
            #expect(services[CaptureContract.busName]?.running == true, "\(services)")

            // All at once: the same values, typed.
            let alerts = try await earshot.alerts.readAll()
            #expect(alerts[.displayLines] == 3)
            #expect(alerts[.queueLength] == 0)
            #expect(alerts[.current] == .some(nil))
            let session = try await earshot.session.readAll()
            #expect(session[.category] == (try await earshot.session.read(.category)))
            #expect(session[.duckLevel] == 0.3)
            #expect(try await earshot.orchestrator.readAll()[.services]?[CaptureContract.busName]?.running == true)

            // Written and observed.
            let levels = try await earshot.session.observe(.duckLevel)
            var seen = levels.makeAsyncIterator()
            let first = await seen.next()
            #expect(first == .some(0.3))
            try await earshot.session.write(.duckLevel, 0.2)
            #expect(try await earshot.session.read(.duckLevel) == 0.2)
            let changed = await seen.next()
            #expect(changed == .some(0.2))
            let readOnly = await #expect(throws: EarshotError.self) {
                try await earshot.session.write(ObjectProperty<SessionProxy, Double>(SessionContract.Manager.interface,
                                                                                       SessionContract.Manager.sampleRate,
                                                                                       decode: PropertyDecoding.double,
                                                                                       encode: { .double($0) }), 8000)
            }
            #expect(readOnly?.name == "org.freedesktop.DBus.Error.PropertyReadOnly")

            // A pass-thru's and an alert's own properties.
            let passThru = try await earshot.capture.perform(AudioPassThruRequest(maxDurationMs: 400))
            #expect(try await passThru.read(.maxDuration) == 400)
            #expect(try await passThru.read(.samplingRate) == 16000)
            #expect(try await passThru.read(.owner) == stack.client.uniqueName)
            _ = try await passThru.result
            #expect(try await passThru.read(.state) == .finished)
            #expect(try await passThru.read(.resultCode) == .success)
            #expect(try await passThru.read(.framesCaptured) == 6400)

            var alert = Alert(text: "Fuel low")
            alert.softButtons = [Alert.SoftButton(id: 1, text: "OK")]
            let shown = try await earshot.alerts.show(alert)
            #expect(try await shown.read(.priority) == .normal)
            #expect(try await shown.read(.softButtons).count == 1)
            #expect(try await shown.read(.resultCode) == nil)
            try await shown.dismiss()
            _ = try await shown.result
            #expect(try await shown.read(.resultCode) == .success)
        }
    }
}
