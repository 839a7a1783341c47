import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

@Suite struct QueryTests {
    @Test(arguments: Backend.allCases) func listFiltersSortsAndPages(backend: Backend) async throws {
        try await PiecesFixture.with(backend) { pieces in
            let wav = pieces.file("mix.wav")
            try Data(TestMedia.wav(seconds: 1)).write(to: wav)
            func drop(_ title: String, _ tempo: Double, _ configure: (inout PieceDrop) -> Void = { _ in }) async throws -> String {
                try await pieces.drop(.titled(title, stem: wav) { $0.tempo = tempo; configure(&$0) })
            }
            let major = PiecesFixture.major
            let alpha = try await drop("Alpha groove", 90) { $0.tonality = .tonal; $0.scale = major; $0.root = 0; $0.timeSignature = (4, 4) }
            let beta = try await drop("Beta", 120) {
                $0.tonality = .tonal; $0.scale = major; $0.root = 7; $0.timeSignature = (3, 4); $0.basedOn = [alpha]
            }
            let middle = try await pieces.get(beta).createdAt
            let gamma = try await drop("Gamma groove", 128) { $0.tonality = .atonal; $0.basedOn = [beta] }
            let delta = try await drop("delta", 140) { $0.basedOn = [beta, alpha] }
            let hidden = try await drop("Hidden", 100) { $0.listed = false }

            #expect(try await pieces.list().total == 5)  // the caller's own unlisted piece too
            #expect(try await pieces.list().ids == [alpha, beta, gamma, delta, hidden])
            #expect(try await pieces.list { $0.descending = true; $0.limit = 2 }.ids == [hidden, delta])
            let page = try await pieces.list { $0.offset = 1; $0.limit = 2 }
            #expect(page.ids == [beta, gamma])
            #expect(page.total == 5)
            #expect(try await pieces.list { $0.titleContains = "GROOVE" }.ids == [alpha, gamma])
            #expect(try await pieces.list { $0.titleContains = "%" }.total == 0)
            // An integer for TempoMax, a floating key, which the client cannot spell: sent raw.
            let range = try await pieces.list(raw: [QueryKeys.tempoMin.name: .double(100), QueryKeys.tempoMax.name: .uint32(130)])
            #expect(range.first?.arrayValue?.compactMap { $0.stringKeyedValue?[StoredKeys.id]?.stringValue } == [beta, gamma, hidden])
            #expect(try await pieces.list { $0.tonality = .tonal; $0.tempoMin = 100 }.ids == [beta])
            #expect(try await pieces.list { $0.tonality = .tonal; $0.root = 7 }.ids == [beta])
            #expect(try await pieces.list { $0.timeSignature = (4, 4) }.ids == [alpha])
            #expect(try await pieces.list { $0.basedOn = beta }.ids == [gamma, delta])
            let author = try await pieces.get(alpha).author
            try #require(!author.isEmpty)
            #expect(try await pieces.list { $0.author = author }.total == 5)
            #expect(try await pieces.list { $0.author = "somebody-else" }.total == 0)
            #expect(try await pieces.list { $0.createdAfter = middle }.ids == [gamma, delta, hidden])
            #expect(try await pieces.list { $0.createdBefore = middle }.ids == [alpha])
            #expect(try await pieces.list { $0.sortBy = .title }.ids == [alpha, beta, gamma, hidden, delta])  // SQLite's binary order
            #expect(try await pieces.list { $0.sortBy = .tempo; $0.descending = true }.ids == [delta, gamma, beta, hidden, alpha])
            #expect(try await pieces.list { $0.sortBy = .length }.total == 5)

            // Queries the client refuses to send or cannot spell, sent raw.
            for bad: [String: DBusValue] in [[QueryKeys.limit.name: .uint32(501)], [QueryKeys.limit.name: .uint32(0)],
                                             [QueryKeys.sortBy.name: .string("colour")], [QueryKeys.tonality.name: .string("major")],
                                             ["Wobble": .boolean(true)], [QueryKeys.tempoMin.name: .string("fast")]] {
                await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") { _ = try await pieces.list(raw: bad) }
            }
            await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") { _ = try await pieces.list { $0.createdAfter = "yesterday" } }
            await expectDBusError(EarshotErrorName.invalidData.name) { _ = try await pieces.list { $0.tempoMin = 130; $0.tempoMax = 120 } }

            // Lineage, transitively, nearest first.
            let lineage = try await pieces.pieces.lineage(gamma)
            #expect(lineage.ancestors == [beta, alpha] && lineage.descendants.isEmpty)
            let roots = try await pieces.pieces.lineage(alpha)
            #expect(roots.ancestors.isEmpty && roots.descendants == [beta, delta, gamma])
            await expectDBusError(EarshotErrorName.pieceNotFound.name) { _ = try await pieces.pieces.lineage("x") }
        }
    }

    @Test(arguments: Backend.allCases) func deleteRemovesThePieceAndItsFiles(backend: Backend) async throws {
        try await PiecesFixture.with(backend) { pieces in
            let wav = pieces.file("mix.wav"), other = pieces.file("other.wav"), cover = pieces.file("cover.png")
            try Data(TestMedia.wav(seconds: 1)).write(to: wav)
            try Data(TestMedia.wav(seconds: 1, frequency: 880)).write(to: other)
            try await TestMedia.image(cover, width: 640, height: 640)
            let changes = try await pieces.changes()
            let keep = try await pieces.drop(.titled("Keep", stem: wav))
            let gone = try await pieces.drop(.titled("Gone", stem: wav) { $0.preview = .path(other.path); $0.coverImage = .path(cover.path) })
            _ = try await pieces.pieces.openMixStem(gone, format: .flac)  // a transcode of the shared stem
            #expect(try await pieces.get(gone).id == gone)
            #expect(try await pieces.pieces.read(.count) == 2)
            #expect(try await pieces.storedObjects().objects.count == 4)

            try await pieces.delete(gone)
            #expect(await changes.next(within: .seconds(5)) { $0.deleted != nil }?.deleted == gone)
            await expectDBusError(EarshotErrorName.pieceNotFound.name) { _ = try await pieces.get(gone) }
            await expectDBusError(EarshotErrorName.pieceNotFound.name) { try await pieces.delete(gone) }
            #expect(try await pieces.pieces.read(.count) == 1)
            // Only the shared mix stem is left; the kept piece still reads it.
            #expect(try await pieces.storedObjects().objects == [TestMedia.sha256(Array(try Data(contentsOf: wav)))])
            #expect(try await pieces.mixStem(keep) == Array(try Data(contentsOf: wav)))
        }
    }
}
