import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Glibc
import Testing

/// A client sends a call that takes a while and leaves the bus before the reply. The
/// service finishes the work (nobody is left to answer), stays up and answers the next
/// client; the store holds the whole piece, nothing staged or orphaned.
@Suite(.timeLimit(.minutes(3))) struct PeerDisconnectTests {
    @Test func dropWhoseCallerLeavesMidStream() async throws {
        try await ServiceStack.with(["earshot-pieces"]) { stack in
            let store = StoreDirectory(url: stack.file("pieces"))
            let changes = Arrivals(try await stack.client.pieces.changes())
            let stem = TestAudio.wav(seconds: 20, frequency: 523)  // 3.5 MB
            let source = try SlowSource()
            let caller = try await stack.bus.connect()
            let call = Task {
                try await caller.drop(PieceDrop(title: "Caller gone", mixStem: .descriptor(source.reader)))
            }
            // Half the stem is in: the service is staging it.
            source.write(Array(stem.prefix(stem.count / 2)))
            #expect(await eventually { store.largestStagedSize >= stem.count / 4 }, "the service never started staging")
            caller.close()
            await #expect(throws: EarshotError.self) { _ = try await call.value }

            source.write(Array(stem.dropFirst(stem.count / 2)))
            source.finish()
            guard case .dropped(let id, _) = await changes.next(within: .seconds(30)) else {
                Issue.record("the piece was not announced as dropped")
                return
            }

            // The next client is answered; the piece is whole; nothing else is on disk.
            #expect(try await stack.client.pieceIDs() == [id])
            #expect(try await stack.client.mixStem(id) == stem)
            #expect(store.objects == [TestAudio.sha256(stem)])
            #expect(store.staged.isEmpty)
            #expect(stack.process("earshot-pieces")?.isRunning == true)
        }
    }

    @Test func exportWhoseCallerLeavesMidTranscode() async throws {
        try await ServiceStack.with(["earshot-pieces"]) { stack in
            let store = StoreDirectory(url: stack.file("pieces"))
            let stem = TestAudio.wav(seconds: 60, frequency: 392)  // 10.6 MB: seconds of AAC encoding
            let stemFile = stack.file("long.wav")
            try Data(stem).write(to: stemFile)
            let id = try await stack.client.drop(PieceDrop(title: "Long", mixStemPath: stemFile.path))

            let caller = try await stack.bus.connect()
            let exported = stack.file("export.m4a")
            let call = Task {
                try await caller.pieces.exportMixStem(id, format: .aacM4A, to: exported.path)
            }
            #expect(await eventually { store.staged.contains { $0.hasSuffix(".m4a") } }, "the transcode never started")
            caller.close()
            await #expect(throws: EarshotError.self) { _ = try await call.value }

            // The transcode is finished, kept, and delivered where the caller wanted it.
            #expect(await eventually(timeout: .seconds(60)) { store.objects.count == 2 && store.staged.isEmpty })
            let aac = try await stack.client.mixStem(id, format: .aacM4A)
            #expect(Array(aac.dropFirst(4).prefix(4)) == Array("ftyp".utf8))
            #expect(await eventually { (try? Data(contentsOf: exported)).map { [UInt8]($0) == aac } ?? false },
                    "the export is not the stored transcode")
            #expect(store.objects == [TestAudio.sha256(stem), TestAudio.sha256(aac)])
            #expect(try await stack.client.mixStem(id) == stem)
        }
    }

    @Test func setDesiredStateWhoseCallersLeaveAtOnce() async throws {
        try await ServiceStack.with(["earshot-session"]) { stack in
            // Not the initial soloAmbient: the outcome shows calls got through.
            let categories = ["playback", "ambient", "playAndRecord"]
            for round in 0..<24 {
                let caller = try await stack.bus.connect()
                let category = categories[round % categories.count]
                let call = Task {
                    try await caller.earshot.session.setDesiredState(DesiredSessionState(category: category))
                }
                // Leave at once, or after the call has had a few milliseconds.
                if round % 2 == 1 { try await Task.sleep(for: .milliseconds(round % 7)) }
                caller.close()
                _ = try? await call.value
            }
            // Calls whose callers left are still worked through, one after another. Once the
            // service has settled, what it holds is what it saved, and nothing is half-written.
            func saved() -> (category: String?, leftovers: [String]) {
                let json = (try? Data(contentsOf: stack.file("session.json")))
                    .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
                let configuration = (json?["desired"] as? [String: Any])?["configuration"] as? [String: Any]
                let names = (try? FileManager.default.contentsOfDirectory(atPath: stack.bus.directory.path)) ?? []
                return (configuration?["category"] as? String, names.filter { $0.hasSuffix(".tmp") })
            }
            func held() async -> String? {
                let desired = try? await stack.client.earshot.session.read(.desiredState)
                return desired?[Session.Keys.category.name]?.stringValue
            }
            // Settled: consistent, and no call logged as set for a while.
            let service = try #require(stack.process("earshot-session"))
            var lastLog = ""
            let settled = await eventually(timeout: .seconds(20)) {
                let log = service.logText
                defer { lastLog = log }
                guard log == lastLog else {
                    try? await Task.sleep(for: .milliseconds(300))
                    return false
                }
                let file = saved()
                let holding = await held()
                return file.leftovers.isEmpty && file.category != nil && file.category == holding
            }
            let holding = await held()
            #expect(settled, "held \(holding ?? "nothing"), saved \(saved())")
            #expect(categories.contains(holding ?? ""), "no call got through")

            // The next client is answered, and what it set is held and saved.
            try await stack.client.earshot.session.setDesiredState(DesiredSessionState(category: "record"))
            #expect(await eventually { saved().category == "record" && saved().leftovers.isEmpty })
            let final = await held()
            #expect(final == "record")
            #expect(service.isRunning)
        }
    }
}
