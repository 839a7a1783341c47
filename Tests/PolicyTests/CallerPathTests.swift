import CFileAccess
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc
import Testing

/// Paths that callers name, on a system bus whose services run as `earshot` with no right
/// to act as anyone else: earshot-open-as opens each as the caller (as systemd starts it on
/// a head unit), so the kernel decides as the caller would and what is made is the caller's.
@Suite struct CallerPathTests {
    /// A directory only `user` may enter, in the stack's directory.
    static func privateDirectory(_ name: String, of user: String, in fixture: PolicyStack) throws -> URL {
        let directory = fixture.stack.file(name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard let owner = TestUser.lookup(user), chown(directory.path, owner.uid, owner.gid) == 0, chmod(directory.path, 0o700) == 0 else {
            throw HarnessError("cannot hand \(directory.path) to \(user)")
        }
        return directory
    }

    @Test func pathsAreOpenedAsTheCaller() async throws {
        try await PolicyStack.with { fixture in
            let alice = try await fixture.agent(PolicyStack.alice)
            let bob = try await fixture.agent(PolicyStack.bob)
            let home = try Self.privateDirectory("alice-home", of: PolicyStack.alice, in: fixture)

            // A mix stem only alice may read, in a directory only she may enter.
            let stem = home.appendingPathComponent("take.wav")
            try FileManager.default.moveItem(atPath: try fixture.wave("take.wav", ownedBy: PolicyStack.alice), toPath: stem.path)
            chmod(stem.path, 0o600)
            let dropped = try await alice.drop(title: "Alice's own", mixStemPath: stem.path)
            let id = try #require(dropped.firstString, "alice's drop of her private file: \(dropped)")
            let refused = try await bob.drop(title: "Not Bob's", mixStemPath: stem.path)
            #expect(refused.errorName == PolicyStack.disallowed, "bob's drop of alice's private file: \(refused)")

            // An export into alice's directory is hers; bob may not write there.
            let pieces = PolicyStack.pieces, manager = PolicyStack.path(of: pieces)
            let export = home.appendingPathComponent("export.wav")
            let exported = try await alice.call(pieces, manager, pieces, Pieces.exportMixStem, signature: "sss",
                                                [.string(id), .string("wave"), .string(export.path)])
            #expect(exported.succeeded, "alice's export: \(exported)")
            var info = stat()
            #expect(stat(export.path, &info) == 0 && info.st_uid == TestUser.lookup(PolicyStack.alice)?.uid, "the export is not alice's")
            let intruded = try await bob.call(pieces, manager, pieces, Pieces.exportMixStem, signature: "sss",
                                              [.string(id), .string("wave"), .string(home.appendingPathComponent("bob.wav").path)])
            #expect(intruded.errorName == PolicyStack.disallowed, "bob's export into alice's directory: \(intruded)")

            // A pass-thru's OutputPath likewise.
            let capture = PolicyStack.capture
            let request: [String: AgentArgument] = [Capture.Keys.samplingRate.name: .u(16000), Capture.Keys.bitsPerSample.name: .u(16),
                                                    Capture.Keys.audioType.name: .s("PCM"), Capture.Keys.maxDuration.name: .u(300)]
            var bobs = request
            bobs[Capture.Keys.outputPath.name] = .s(home.appendingPathComponent("bob-take.wav").path)
            let bobTake = try await bob.call(capture, PolicyStack.path(of: capture), capture, Capture.performAudioPassThru,
                                             signature: "a{sv}", [.dictionary(bobs)])
            #expect(bobTake.errorName == PolicyStack.accessDenied, "bob's \(CaptureContract.Manager.Keys.outputPath.name) in alice's directory: \(bobTake)")
            var alices = request
            alices[Capture.Keys.outputPath.name] = .s(home.appendingPathComponent("alice-take.wav").path)
            let aliceTake = try await alice.call(capture, PolicyStack.path(of: capture), capture, Capture.performAudioPassThru,
                                                 signature: "a{sv}", [.dictionary(alices)])
            #expect(aliceTake.succeeded, "alice's \(CaptureContract.Manager.Keys.outputPath.name): \(aliceTake)")
            #expect(stat(home.appendingPathComponent("alice-take.wav").path, &info) == 0
                        && info.st_uid == TestUser.lookup(PolicyStack.alice)?.uid, "the recording is not alice's")

            // Alerts below EMERGENCY wait for the end of a recording pass-thru (capture-active).
            let take = try #require(aliceTake.firstString, "\(aliceTake)")
            try await fixture.waitFor(try fixture.passThru(take), .resultCode, toBe: .success)

            // An alert's FILE chunk plays when its caller may read the file, and is
            // FILE_NOT_FOUND for anyone else.
            let alerts = PolicyStack.alerts
            func alert(_ agent: BusAgent) async throws -> String {
                let keys: [String: AgentArgument] = [
                    Alerts.Keys.audio.name: .variant("a(ss)", .list([.list([.string("FILE"), .string(stem.path)])])),
                    Alerts.Keys.outliveOwner.name: .b(true),
                ]
                let reply = try await agent.call(alerts, PolicyStack.path(of: alerts), alerts, Alerts.presentAlert, signature: "a{sv}",
                                                 [.dictionary(keys)])
                return try #require(reply.firstString, "\(reply)")
            }
            let played = try await alert(alice)
            try await fixture.waitFor(try fixture.alert(played), .resultCode, toBe: .success)
            let unread = try await alert(bob)
            try await fixture.waitFor(try fixture.alert(unread), .resultCode, toBe: .fileNotFound)

            // Only regular files: a FIFO would hold the helper forever.
            let fifo = home.appendingPathComponent("fifo.wav")
            mkfifo(fifo.path, 0o600)
            chown(fifo.path, TestUser.lookup(PolicyStack.alice)!.uid, TestUser.lookup(PolicyStack.alice)!.gid)
            let piped = try await alice.drop(title: "A pipe", mixStemPath: fifo.path)
            #expect(piped.errorName == "org.freedesktop.DBus.Error.InvalidArgs", "a FIFO as a mix stem: \(piped)")
        }
    }

    /// earshot-open-as believes the bus, not the service that asks it: told (on its socket,
    /// as a service would ask) to open alice's file for alice, it does so only for a
    /// connection the bus says is alice's and only while it is on the bus; never for a name
    /// the bus does not know (no call of alice's at all), for bob's connection, for the
    /// services' own user or for root.
    @Test func theHelperActsOnlyForACallerTheBusVouchesFor() async throws {
        try await PolicyStack.with { fixture in
            let socket = try #require(fixture.stack.openAsSocket)
            let alice = try await fixture.agent(PolicyStack.alice)
            let bob = try await fixture.agent(PolicyStack.bob)
            let aliceUid = try #require(TestUser.lookup(PolicyStack.alice)).uid
            let serviceUid = try #require(TestUser.lookup(PolicyStack.serviceUser)).uid
            let home = try Self.privateDirectory("alice-notes", of: PolicyStack.alice, in: fixture)
            let note = home.appendingPathComponent("note.txt")
            try Data("alice's".utf8).write(to: note)
            chown(note.path, aliceUid, try #require(TestUser.lookup(PolicyStack.alice)).gid)
            chmod(note.path, 0o600)
            func open(as uid: uid_t, for caller: String) -> Int32 {
                let fd = earshot_open_through_helper(socket, uid, caller, note.path, O_RDONLY, 0)
                if fd >= 0 { close(fd) }
                return fd >= 0 ? 0 : fd
            }
            #expect(open(as: aliceUid, for: alice.uniqueName) == 0, "alice's own call")
            #expect(open(as: aliceUid, for: ":1.99999") == -EPERM, "a name the bus does not know")
            #expect(open(as: aliceUid, for: bob.uniqueName) == -EPERM, "bob's connection")
            let service = try #require(try await fixture.stack.client.nameOwner(PolicyStack.capture))
            #expect(open(as: serviceUid, for: service) == -EPERM, "the services' own user")
            #expect(open(as: 0, for: fixture.stack.client.uniqueName) == -EPERM, "root")
            // alice leaves: her name is hers no more.
            let gone = alice.uniqueName
            await alice.shutdown()
            try await Task.sleep(for: .milliseconds(200))
            #expect(open(as: aliceUid, for: gone) == -EPERM, "alice's name after she left")
        }
    }
}
