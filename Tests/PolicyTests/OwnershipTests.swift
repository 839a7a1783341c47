import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

/// What the services themselves allow on the system bus: a request belongs to the unique
/// name that made it (a piece to the user who dropped it). Bob, as allowed on the bus as
/// alice, cannot end, cancel or delete what is hers (`org.earshot.Error.Disallowed`, and
/// nothing changes); alice can, and so can root.
@Suite(.serialized) struct OwnershipTests {
    static let passThru = PassThruMembers.interface.name
    static let alert = AlertMembers.interface.name
    static let job = JobMembers.interface.name

    @Test func aPassThruAnswersOnlyItsOwner() async throws {
        try await PolicyStack.with { fixture in
            let alice = try await fixture.agent(PolicyStack.alice)
            let bob = try await fixture.agent(PolicyStack.bob)
            let capture = PolicyStack.capture
            // Each way of ending, by alice, after bob has tried them all.
            let endings: [(MethodDeclaration, ResultCode)] = [(PassThruMembers.end, .success), (PassThruMembers.done, .success), (PassThruMembers.cancel, .aborted),
                                                           (PassThruMembers.retry, .retry)]
            for (ending, resultCode) in endings {
                let started = try await alice.performAudioPassThru()
                let path = try #require(started.firstString, "\(started)")
                try await fixture.waitFor(try fixture.passThru(path), .state, toBe: .recording)
                let owner = try await fixture.passThru(path).read(.owner)
                #expect(owner == alice.uniqueName)

                for member in [PassThruMembers.end, PassThruMembers.done, PassThruMembers.cancel, PassThruMembers.retry, PassThruMembers.openStream] {
                    let reply = try await bob.call(capture, path, Self.passThru, member)
                    #expect(reply.errorName == PolicyStack.disallowed, "bob \(member.name) on alice's pass-thru: \(reply)")
                }
                // EndAudioPassThru ends the caller's own pass-thru; bob has none.
                let endOwn = try await bob.call(capture, PolicyStack.path(of: capture), capture, Capture.endAudioPassThru)
                #expect(endOwn.errorName == EarshotErrorName.rejected.name, "bob \(CaptureContract.Manager.endAudioPassThru.name): \(endOwn)")
                let state = try await fixture.passThru(path).read(.state)
                #expect(state == .recording, "after bob's attempts")

                if ending == PassThruMembers.end {
                    // The agent reads what the pipe first gives: the microphone's audio.
                    let stream = try await alice.call(capture, path, Self.passThru, PassThruMembers.openStream)
                    let bytes: Double = if case .number(let count)? = stream.values.first?["fdBytes"] { count } else { 0 }
                    #expect(bytes > 0, "alice \(CaptureContract.PassThru.openStream.name): \(stream)")
                }
                let reply = try await alice.call(capture, path, Self.passThru, ending)
                #expect(reply.succeeded, "alice \(ending.name): \(reply)")
                try await fixture.waitFor(try fixture.passThru(path), .state, toBe: .finished)
                let code = try await fixture.passThru(path).read(.resultCode)
                #expect(code == resultCode, "alice \(ending.name)")
            }
        }
    }

    @Test func aJobCancelsOnlyByItsOwnerOrRoot() async throws {
        try await PolicyStack.with { fixture in
            let alice = try await fixture.agent(PolicyStack.alice)
            let bob = try await fixture.agent(PolicyStack.bob)
            let orchestrator = PolicyStack.orchestrator

            let started = try await alice.recordPiece(title: "Alice's idea")
            let path = try #require(started.firstString, "\(started)")
            try await fixture.waitFor(try fixture.job(path), .state, toBe: .recording)
            let refused = try await bob.call(orchestrator, path, Self.job, JobMembers.cancel)
            #expect(refused.errorName == PolicyStack.disallowed, "bob Cancel on alice's job: \(refused)")
            let state = try await fixture.job(path).read(.state)
            #expect(state == .recording, "after bob's attempt")
            let cancelled = try await alice.call(orchestrator, path, Self.job, JobMembers.cancel)
            #expect(cancelled.succeeded, "alice Cancel: \(cancelled)")
            try await fixture.waitFor(try fixture.job(path), .state, toBe: .finished)
            let code = try await fixture.job(path).read(.resultCode)
            #expect(code == .aborted)

            // On the system bus uid 0 may cancel anyone's job.
            let second = try await alice.recordPiece(title: "Alice's second idea")
            let secondPath = try #require(second.firstString, "\(second)")
            try await fixture.waitFor(try fixture.job(secondPath), .state, toBe: .recording)
            try await fixture.job(secondPath).cancel()
            try await fixture.waitFor(try fixture.job(secondPath), .state, toBe: .finished)
            let secondCode = try await fixture.job(secondPath).read(.resultCode)
            #expect(secondCode == .aborted)
        }
    }

    @Test func anAlertAnswersOnlyItsOwnerOrRoot() async throws {
        try await PolicyStack.with { fixture in
            let alice = try await fixture.agent(PolicyStack.alice)
            let bob = try await fixture.agent(PolicyStack.bob)
            let alerts = PolicyStack.alerts

            let presented = try await alice.presentAlertWithButton("Alice's alert")
            let path = try #require(presented.firstString, "\(presented)")
            try await fixture.waitFor(try fixture.alert(path), .state, toBe: .presenting)
            let owner = try await fixture.alert(path).read(.owner)
            #expect(owner == alice.uniqueName)
            let attempts = [(AlertMembers.cancel, try await bob.call(alerts, path, Self.alert, AlertMembers.cancel)),
                            (AlertMembers.dismiss, try await bob.call(alerts, path, Self.alert, AlertMembers.dismiss)),
                            (AlertMembers.pressButton, try await bob.call(alerts, path, Self.alert, AlertMembers.pressButton, signature: "q",
                                                                   [.integer(1)]))]
            for (member, reply) in attempts {
                #expect(reply.errorName == PolicyStack.disallowed, "bob \(member.name) on alice's alert: \(reply)")
            }
            let state = try await fixture.alert(path).read(.state)
            #expect(state == .presenting, "after bob's attempts")
            let cancelled = try await alice.call(alerts, path, Self.alert, AlertMembers.cancel)
            #expect(cancelled.succeeded, "alice Cancel: \(cancelled)")
            try await fixture.waitFor(try fixture.alert(path), .state, toBe: .finished)
            let code = try await fixture.alert(path).read(.resultCode)
            #expect(code == .aborted)

            // On the system bus uid 0 may cancel anyone's alert.
            let second = try await alice.presentAlertWithButton("Alice's second alert")
            let secondPath = try #require(second.firstString, "\(second)")
            try await fixture.waitFor(try fixture.alert(secondPath), .state, toBe: .presenting)
            try await fixture.alert(secondPath).cancel()
            try await fixture.waitFor(try fixture.alert(secondPath), .state, toBe: .finished)
            let secondCode = try await fixture.alert(secondPath).read(.resultCode)
            #expect(secondCode == .aborted)
        }
    }

    @Test func aPieceDeletesOnlyByItsAuthorOrRoot() async throws {
        try await PolicyStack.with { fixture in
            let alice = try await fixture.agent(PolicyStack.alice)
            let bob = try await fixture.agent(PolicyStack.bob)
            let pieces = PolicyStack.pieces
            let manager = PolicyStack.path(of: pieces)
            func get(_ id: String, as agent: BusAgent) async throws -> AgentReply {
                try await agent.call(pieces, manager, pieces, Pieces.get, signature: "s", [.string(id)])
            }
            func delete(_ id: String, as agent: BusAgent) async throws -> AgentReply {
                try await agent.call(pieces, manager, pieces, Pieces.delete, signature: "s", [.string(id)])
            }

            let aliceDrop = try await alice.drop(title: "Alice's loop", mixStemPath: try fixture.wave("alice.wav", ownedBy: PolicyStack.alice))
            let aliceID = try #require(aliceDrop.firstString, "\(aliceDrop)")
            let bobDrop = try await bob.drop(title: "Bob's loop", mixStemPath: try fixture.wave("bob.wav", ownedBy: PolicyStack.bob))
            let bobID = try #require(bobDrop.firstString, "\(bobDrop)")
            let bobsPiece = try await get(bobID, as: alice)
            #expect(bobsPiece.values.first?[Pieces.StoredKeys.author.name] == .string(PolicyStack.bob), "\(bobsPiece)")

            let refused = try await delete(aliceID, as: bob)
            #expect(refused.errorName == PolicyStack.disallowed, "bob Delete on alice's piece: \(refused)")
            let kept = try await get(aliceID, as: bob)
            #expect(kept.values.first?[Pieces.StoredKeys.author.name] == .string(PolicyStack.alice), "after bob's attempt: \(kept)")
            let deleted = try await delete(aliceID, as: alice)
            #expect(deleted.succeeded, "alice Delete: \(deleted)")
            let gone = try await get(aliceID, as: bob)
            #expect(gone.errorName == EarshotErrorName.pieceNotFound.name, "\(gone)")

            // Alice may not delete bob's piece either; root may.
            let refusedToo = try await delete(bobID, as: alice)
            #expect(refusedToo.errorName == PolicyStack.disallowed, "alice Delete on bob's piece: \(refusedToo)")
            try await fixture.earshot.pieces.delete(bobID)
            let bobGone = try await get(bobID, as: bob)
            #expect(bobGone.errorName == EarshotErrorName.pieceNotFound.name, "\(bobGone)")
        }
    }
}
