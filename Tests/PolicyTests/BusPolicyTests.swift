import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

/// What the system bus itself allows under `dbus/org.earshot.conf`: who may own the
/// services' names, and which calls reach them from users in the group `audio` and from
/// users outside it.
@Suite(.serialized) struct BusPolicyTests {
    @Test func onlyTheServiceUserOwnsTheNames() async throws {
        try await PolicyStack.with { fixture in
            let service = try #require(TestUser.lookup(PolicyStack.serviceUser))
            for name in PolicyStack.names {
                let owner = try #require(try await fixture.stack.client.nameOwner(name))
                let identity = try await fixture.stack.client.callerIdentity(owner)
                #expect(identity.uid == service.uid, "\(name) is owned by uid \(identity.uid)")
            }
            let alice = try await fixture.agent(PolicyStack.alice)
            let eve = try await fixture.agent(PolicyStack.eve)
            for agent in [alice, eve] {
                for name in [PolicyStack.capture, PolicyStack.pieces, "org.earshot.Other1"] {
                    let reply = try await agent.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                     "RequestName", signature: "su", [.string(name), .integer(4)])
                    #expect(reply.errorName == PolicyStack.accessDenied, "\(agent.user) owning \(name): \(reply)")
                }
            }
            await expectDBusError(PolicyStack.accessDenied) { try await fixture.stack.client.requestName(PolicyStack.session) }
            // The names stayed with the services.
            for name in PolicyStack.names {
                let owner = try #require(try await fixture.stack.client.nameOwner(name))
                let uid = try await fixture.stack.client.callerIdentity(owner).uid
                #expect(uid == service.uid, "\(name) is owned by uid \(uid)")
            }
        }
    }

    /// Eve (not in `audio`) may look at everything and present alerts; recording,
    /// configuring the session, dropping, deleting and recording pieces are refused by
    /// the bus. Alice (in `audio`) gets through with the same calls.
    @Test func outsideAudioOnlyLookingAndAlertingAreAllowed() async throws {
        try await PolicyStack.with { fixture in
            let alice = try await fixture.agent(PolicyStack.alice)
            let eve = try await fixture.agent(PolicyStack.eve)
            let stem = try fixture.wave("stem.wav", ownedBy: PolicyStack.alice)
            let dropped = try await alice.drop(title: "Alice's loop", mixStemPath: stem)
            let id = try #require(dropped.firstString, "\(dropped)")
            let capture = PolicyStack.capture, session = PolicyStack.session, pieces = PolicyStack.pieces
            let orchestrator = PolicyStack.orchestrator, alerts = PolicyStack.alerts
            let playback = AgentArgument.dictionary(["Category": .s("playback")])
            let keepEnforced: [AgentArgument] = [.string(session), .string("KeepEnforced"), .variant("b", .boolean(true))]

            // Denied by the bus.
            let denied: [(String, AgentReply)] = [
                ("PerformAudioPassThru", try await eve.performAudioPassThru()),
                ("EndAudioPassThru", try await eve.call(capture, PolicyStack.path(of: capture), capture, "EndAudioPassThru")),
                ("SetDesiredState", try await eve.call(session, PolicyStack.path(of: session), session, "SetDesiredState",
                                                       signature: "a{sv}", [playback])),
                ("Activate", try await eve.call(session, PolicyStack.path(of: session), session, "Activate",
                                                signature: "a{sv}", [playback])),
                ("Set KeepEnforced", try await eve.call(session, PolicyStack.path(of: session), "org.freedesktop.DBus.Properties",
                                                        "Set", signature: "ssv", keepEnforced)),
                ("Drop", try await eve.drop(title: "Eve's loop", mixStemPath: stem)),
                ("Delete", try await eve.call(pieces, PolicyStack.path(of: pieces), pieces, "Delete", signature: "s", [.string(id)])),
                ("RecordPiece", try await eve.recordPiece(title: "Eve's idea")),
            ]
            for (call, reply) in denied {
                #expect(reply.errorName == PolicyStack.accessDenied, "eve \(call): \(reply)")
            }

            // Allowed: introspection, Peer, properties, the read-only methods, alerts.
            for name in PolicyStack.names {
                let xml = try await eve.call(name, PolicyStack.path(of: name), "org.freedesktop.DBus.Introspectable", "Introspect")
                #expect(xml.firstString?.contains("<interface name=\"\(name)\">") == true, "eve introspecting \(name): \(xml)")
                let ping = try await eve.call(name, PolicyStack.path(of: name), "org.freedesktop.DBus.Peer", "Ping")
                #expect(ping.succeeded, "eve pinging \(name): \(ping)")
            }
            let device = try await eve.property(capture, PolicyStack.path(of: capture), capture, "Device")
            #expect(device.values == [.string("mic")], "\(device)")
            let all = try await eve.call(pieces, PolicyStack.path(of: pieces), "org.freedesktop.DBus.Properties", "GetAll",
                                         signature: "s", [.string(pieces)])
            #expect(all.values.first?["Count"] == .number(1), "\(all)")
            let services = try await eve.property(orchestrator, PolicyStack.path(of: orchestrator), orchestrator, "Services")
            #expect(services.values.first?[capture] != nil, "\(services)")
            let state = try await eve.call(session, PolicyStack.path(of: session), session, "GetState")
            #expect(state.values.first?["Category"] != nil, "\(state)")
            let inputs = try await eve.call(session, PolicyStack.path(of: session), session, "ListInputs")
            #expect(inputs.succeeded, "\(inputs)")
            let list = try await eve.call(pieces, PolicyStack.path(of: pieces), pieces, "List", signature: "a{sv}", [.dictionary([:])])
            #expect(list.values.count == 2 && list.values[1] == .number(1), "\(list)")
            let piece = try await eve.call(pieces, PolicyStack.path(of: pieces), pieces, "Get", signature: "s", [.string(id)])
            #expect(piece.values.first?["Author"] == .string(PolicyStack.alice), "\(piece)")
            let lineage = try await eve.call(pieces, PolicyStack.path(of: pieces), pieces, "Lineage", signature: "s", [.string(id)])
            #expect(lineage.succeeded, "\(lineage)")
            let alert = try await eve.call(alerts, PolicyStack.path(of: alerts), alerts, "PresentAlert", signature: "a{sv}",
                                           [.dictionary(["Text": .s("Eve says hello")])])
            #expect(alert.firstString?.hasPrefix("/org/earshot/Alerts1/Alert/") == true, "\(alert)")

            // Alice, in `audio`, gets through where eve did not.
            let set = try await alice.call(session, PolicyStack.path(of: session), session, "SetDesiredState",
                                           signature: "a{sv}", [playback])
            #expect(set.succeeded, "alice SetDesiredState: \(set)")
            let enforce = try await alice.call(session, PolicyStack.path(of: session), "org.freedesktop.DBus.Properties", "Set",
                                               signature: "ssv", keepEnforced)
            #expect(enforce.succeeded, "alice Set KeepEnforced: \(enforce)")
            let passThru = try await alice.performAudioPassThru()
            #expect(passThru.firstString?.hasPrefix("/org/earshot/Capture1/PassThru/") == true, "alice PerformAudioPassThru: \(passThru)")
            let ended = try await alice.call(capture, PolicyStack.path(of: capture), capture, "EndAudioPassThru")
            #expect(ended.succeeded, "alice EndAudioPassThru: \(ended)")
            let job = try await alice.recordPiece(title: "Alice's idea")
            let jobPath = try #require(job.firstString, "alice RecordPiece: \(job)")
            let cancelled = try await alice.call(orchestrator, jobPath, "org.earshot.Orchestrator1.Job", "Cancel")
            #expect(cancelled.succeeded, "alice cancelling her job: \(cancelled)")
            let deleted = try await alice.call(pieces, PolicyStack.path(of: pieces), pieces, "Delete", signature: "s", [.string(id)])
            #expect(deleted.succeeded, "alice Delete: \(deleted)")
        }
    }
}
