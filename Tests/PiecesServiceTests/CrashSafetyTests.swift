import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Glibc
import Testing

/// kill -9 at random moments of a loop of drops: afterwards every piece is complete or
/// absent, and no file is left that no piece names.
@Suite struct CrashSafetyTests {
    @Test(arguments: Backend.allCases) func killedAtRandomMomentsDuringFiftyDrops(backend: Backend) async throws {
        try await PiecesFixture.with(backend) { pieces in
            var generator = SeededGenerator(seed: 20261122)
            var service = pieces.service
            var expected: [String: (stem: String, attachment: String)] = [:]  // pieces whose Drop replied
            var contents: [String: [UInt8]] = [:]  // by title
            var killed = 0
            for index in 0..<50 {
                let stem = TestMedia.wav(seconds: 0.5 + Double(index % 5) * 0.5, channels: 2, frequency: 200 + Double(index) * 10)
                let attachment = (0..<(200_000 + index * 1000)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
                let stemFile = pieces.file("stem-\(index).wav"), attachmentFile = pieces.file("attachment-\(index).bin")
                try Data(stem).write(to: stemFile)
                try Data(attachment).write(to: attachmentFile)
                contents["Crash \(index)"] = stem
                let caller = try await pieces.bus.connect()
                let piece = PieceDrop.titled("Crash \(index)", stem: stemFile) {
                    $0.attachment = (.path(attachmentFile.path), "application/octet-stream")
                }
                let drop = Task { try await pieces.drop(piece, on: caller) }
                let kill = generator.next() % 3 != 0  // two drops in three see a kill
                if kill {
                    try await Task.sleep(for: .microseconds(Int(generator.next() % 40_000)))
                    service.signal(SIGKILL)
                    _ = await service.waitForExit()
                    killed += 1
                }
                if let id = try? await drop.value {
                    expected[id] = (TestMedia.sha256(stem), TestMedia.sha256(attachment))
                }
                caller.close()
                if kill { service = try await pieces.restart() }
            }
            #expect(killed > 20)

            let listed = try await pieces.list { $0.limit = 500 }
            // Every acknowledged drop survived.
            #expect(Set(expected.keys).isSubset(of: Set(listed.ids)))
            var named: Set<String> = []
            for id in listed.ids {
                let piece = try await pieces.get(id)
                let stem = try await pieces.mixStem(id)
                #expect(stem == contents[piece.title], "\(piece.title) has a different mix stem")
                let attachment = try readAll(try await pieces.pieces.openAttachment(id).fd)
                #expect(piece.values[StoredKeys.size(PieceKeys.attachment.fd.name)]?.uint64Value == UInt64(attachment.count))
                if let want = expected[id] {
                    #expect(TestMedia.sha256(stem) == want.stem)
                    #expect(TestMedia.sha256(attachment) == want.attachment)
                }
                named.insert(TestMedia.sha256(stem))
                named.insert(TestMedia.sha256(attachment))
            }
            // After a restart's sweep: exactly the named files, nothing staged.
            await service.shutdown()
            let final = try await pieces.restart()
            let stored = try await pieces.storedObjects()
            #expect(stored.objects == named)
            #expect(stored.staged.isEmpty)
            await final.shutdown()
        }
    }
}
