import EarshotClient
import EarshotContract
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
            let playback = AgentArgument.dictionary([Session.Keys.category.name: .s("playback")])
            let keepEnforced: [AgentArgument] = [.string(session), .string(Session.keepEnforced.name), .variant("b", .boolean(true))]

            // Denied by the bus.
            let denied: [(String, AgentReply)] = [
                (Capture.performAudioPassThru.name, try await eve.performAudioPassThru()),
                (Capture.endAudioPassThru.name, try await eve.call(capture, PolicyStack.path(of: capture), capture,
                                                                   Capture.endAudioPassThru)),
                (Session.setDesiredState.name, try await eve.call(session, PolicyStack.path(of: session), session, Session.setDesiredState,
                                                                  signature: "a{sv}", [playback])),
                (Session.activate.name, try await eve.call(session, PolicyStack.path(of: session), session, Session.activate,
                                                           signature: "a{sv}", [playback])),
                ("Set \(SessionContract.Manager.keepEnforced.name)", try await eve.call(session, PolicyStack.path(of: session), "org.freedesktop.DBus.Properties",
                                                        "Set", signature: "ssv", keepEnforced)),
                (Pieces.drop.name, try await eve.drop(title: "Eve's loop", mixStemPath: stem)),
                (Pieces.delete.name, try await eve.call(pieces, PolicyStack.path(of: pieces), pieces, Pieces.delete, signature: "s",
                                                        [.string(id)])),
                (Orchestrator.recordPiece.name, try await eve.recordPiece(title: "Eve's idea")),
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
            let device = try await eve.property(capture, PolicyStack.path(of: capture), capture, Capture.device)
            #expect(device.values == [.string("mic")], "\(device)")
            let all = try await eve.call(pieces, PolicyStack.path(of: pieces), "org.freedesktop.DBus.Properties", "GetAll",
                                         signature: "s", [.string(pieces)])
            #expect(all.values.first?[Pieces.count.name] == .number(1), "\(all)")
            let services = try await eve.property(orchestrator, PolicyStack.path(of: orchestrator), orchestrator, Orchestrator.services)
            #expect(services.values.first?[capture] != nil, "\(services)")
            let state = try await eve.call(session, PolicyStack.path(of: session), session, Session.getState)
            #expect(state.values.first?[Session.category.name] != nil, "\(state)")
            let inputs = try await eve.call(session, PolicyStack.path(of: session), session, Session.listInputs)
            #expect(inputs.succeeded, "\(inputs)")
            let list = try await eve.call(pieces, PolicyStack.path(of: pieces), pieces, Pieces.list, signature: "a{sv}", [.dictionary([:])])
            #expect(list.values.count == 2 && list.values[1] == .number(1), "\(list)")
            let piece = try await eve.call(pieces, PolicyStack.path(of: pieces), pieces, Pieces.get, signature: "s", [.string(id)])
            #expect(piece.values.first?[Pieces.StoredKeys.author.name] == .string(PolicyStack.alice), "\(piece)")
            let lineage = try await eve.call(pieces, PolicyStack.path(of: pieces), pieces, Pieces.lineage, signature: "s", [.string(id)])
            #expect(lineage.succeeded, "\(lineage)")
            let alert = try await eve.call(alerts, PolicyStack.path(of: alerts), alerts, Alerts.presentAlert, signature: "a{sv}",
                                           [.dictionary([Alerts.Keys.text.name: .s("Eve says hello")])])
            #expect(alert.firstString?.hasPrefix("/org/earshot/Alerts1/Alert/") == true, "\(alert)")

            // Alice, in `audio`, gets through where eve did not.
            let set = try await alice.call(session, PolicyStack.path(of: session), session, Session.setDesiredState,
                                           signature: "a{sv}", [playback])
            #expect(set.succeeded, "alice \(SessionContract.Manager.setDesiredState.name): \(set)")
            let enforce = try await alice.call(session, PolicyStack.path(of: session), "org.freedesktop.DBus.Properties", "Set",
                                               signature: "ssv", keepEnforced)
            #expect(enforce.succeeded, "alice Set \(SessionContract.Manager.keepEnforced.name): \(enforce)")
            let passThru = try await alice.performAudioPassThru()
            #expect(passThru.firstString?.hasPrefix("/org/earshot/Capture1/PassThru/") == true, "alice \(CaptureContract.Manager.performAudioPassThru.name): \(passThru)")
            let ended = try await alice.call(capture, PolicyStack.path(of: capture), capture, Capture.endAudioPassThru)
            #expect(ended.succeeded, "alice \(CaptureContract.Manager.endAudioPassThru.name): \(ended)")
            let job = try await alice.recordPiece(title: "Alice's idea")
            let jobPath = try #require(job.firstString, "alice \(OrchestratorContract.Manager.recordPiece.name): \(job)")
            let cancelled = try await alice.call(orchestrator, jobPath, JobMembers.interface.name, JobMembers.cancel)
            #expect(cancelled.succeeded, "alice cancelling her job: \(cancelled)")
            let deleted = try await alice.call(pieces, PolicyStack.path(of: pieces), pieces, Pieces.delete, signature: "s", [.string(id)])
            #expect(deleted.succeeded, "alice Delete: \(deleted)")
        }
    }
}
