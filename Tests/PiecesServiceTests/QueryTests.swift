import ContractCore
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
            let major: DBusValue = .array(.boolean, [true, false, true, false, true, true, false, true, false, true, false, true].map { .boolean($0) })
            func drop(_ title: String, _ tempo: Double, _ fields: [String: DBusValue] = [:]) async throws -> String {
                try await pieces.drop([PieceKeys.title.name: .string(title), PieceKeys.tempo.name: .double(tempo),
                                       PieceKeys.mixStem.path.name: .string(wav.path)]
                    .merging(fields) { _, new in new })
            }
            // Drop's keys.
            let tonality = PieceKeys.tonality.name, scale = PieceKeys.scale.name, root = PieceKeys.root.name
            let upper = PieceKeys.timeSignatureUpper.name, lower = PieceKeys.timeSignatureLower.name, basedOn = PieceKeys.basedOn.name
            let alpha = try await drop("Alpha groove", 90, [tonality: .string("tonal"), scale: major, root: .byte(0),
                                                            upper: .byte(4), lower: .byte(4)])
            let beta = try await drop("Beta", 120, [tonality: .string("tonal"), scale: major, root: .byte(7),
                                                    upper: .byte(3), lower: .byte(4), basedOn: .strings([alpha])])
            let middle = try await pieces.get(beta)[StoredKeys.createdAt.name]?.stringValue ?? ""
            let gamma = try await drop("Gamma groove", 128, [tonality: .string("atonal"), basedOn: .strings([beta])])
            let delta = try await drop("delta", 140, [basedOn: .strings([beta, alpha])])
            let hidden = try await drop("Hidden", 100, [PieceKeys.listed.name: .boolean(false)])

            #expect(try await pieces.list([:]).total == 5)  // the caller's own unlisted piece too
            #expect(try await pieces.list([:]).ids == [alpha, beta, gamma, delta, hidden])
            #expect(try await pieces.list([QueryKeys.descending.name: .boolean(true), QueryKeys.limit.name: .uint32(2)]).ids
                        == [hidden, delta])
            let page = try await pieces.list([QueryKeys.offset.name: .uint32(1), QueryKeys.limit.name: .uint32(2)])
            #expect(page.ids == [beta, gamma])
            #expect(page.total == 5)
            #expect(try await pieces.list([QueryKeys.titleContains.name: .string("GROOVE")]).ids == [alpha, gamma])
            #expect(try await pieces.list([QueryKeys.titleContains.name: .string("%")]).total == 0)
            let range = try await pieces.list([QueryKeys.tempoMin.name: .double(100), QueryKeys.tempoMax.name: .uint32(130)])
            #expect(range.ids == [beta, gamma, hidden])
            #expect(try await pieces.list([QueryKeys.tonality.name: .string("tonal"), QueryKeys.tempoMin.name: .double(100)]).ids == [beta])
            #expect(try await pieces.list([QueryKeys.tonality.name: .string("tonal"), QueryKeys.root.name: .byte(7)]).ids == [beta])
            #expect(try await pieces.list([QueryKeys.timeSignatureUpper.name: .byte(4), QueryKeys.timeSignatureLower.name: .byte(4)]).ids
                        == [alpha])
            #expect(try await pieces.list([QueryKeys.basedOn.name: .string(beta)]).ids == [gamma, delta])
            let author = try #require(try await pieces.get(alpha)[StoredKeys.author.name]?.stringValue)
            #expect(try await pieces.list([QueryKeys.author.name: .string(author)]).total == 5)
            #expect(try await pieces.list([QueryKeys.author.name: .string("somebody-else")]).total == 0)
            #expect(try await pieces.list([QueryKeys.createdAfter.name: .string(middle)]).ids == [gamma, delta, hidden])
            #expect(try await pieces.list([QueryKeys.createdBefore.name: .string(middle)]).ids == [alpha])
            #expect(try await pieces.list([QueryKeys.sortBy.name: .string("title")]).ids
                        == [alpha, beta, gamma, hidden, delta])  // SQLite's binary order
            #expect(try await pieces.list([QueryKeys.sortBy.name: .string("tempo"), QueryKeys.descending.name: .boolean(true)]).ids
                        == [delta, gamma, beta, hidden, alpha])
            #expect(try await pieces.list([QueryKeys.sortBy.name: .string("length")]).total == 5)

            for bad: [String: DBusValue] in [[QueryKeys.limit.name: .uint32(501)], [QueryKeys.limit.name: .uint32(0)],
                                             [QueryKeys.sortBy.name: .string("colour")], [QueryKeys.tonality.name: .string("major")],
                                             [QueryKeys.createdAfter.name: .string("yesterday")], ["Wobble": .boolean(true)],
                                             [QueryKeys.tempoMin.name: .string("fast")]] {
                await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") { _ = try await pieces.list(bad) }
            }
            await expectDBusError(EarshotErrorName.invalidData.name) {
                _ = try await pieces.list([QueryKeys.tempoMin.name: .double(130), QueryKeys.tempoMax.name: .double(120)])
            }

            // Lineage, transitively, nearest first.
            let lineage = try await pieces.call(Pieces.lineage, [.string(gamma)])
            #expect(lineage.first?.stringArrayValue == [beta, alpha])
            #expect(lineage.last?.stringArrayValue == [])
            let roots = try await pieces.call(Pieces.lineage, [.string(alpha)])
            #expect(roots.first?.stringArrayValue == [])
            #expect(roots.last?.stringArrayValue == [beta, delta, gamma])
            await expectDBusError(EarshotErrorName.pieceNotFound.name) { _ = try await pieces.call(Pieces.lineage, [.string("x")]) }
        }
    }

    @Test(arguments: Backend.allCases) func deleteRemovesThePieceAndItsFiles(backend: Backend) async throws {
        try await PiecesFixture.with(backend) { pieces in
            let wav = pieces.file("mix.wav"), other = pieces.file("other.wav"), cover = pieces.file("cover.png")
            try Data(TestMedia.wav(seconds: 1)).write(to: wav)
            try Data(TestMedia.wav(seconds: 1, frequency: 880)).write(to: other)
            try await TestMedia.image(cover, width: 640, height: 640)
            let deleted = try await pieces.client.subscribe(MatchRule(sender: PiecesFixture.busName, interface: PiecesFixture.interface,
                                                                      member: Pieces.pieceDeleted.name))
            let keep = try await pieces.drop([PieceKeys.title.name: .string("Keep"), PieceKeys.mixStem.path.name: .string(wav.path)])
            let gone = try await pieces.drop([PieceKeys.title.name: .string("Gone"), PieceKeys.mixStem.path.name: .string(wav.path),
                                              PieceKeys.preview.path.name: .string(other.path),
                                              PieceKeys.coverImage.path.name: .string(cover.path)])
            _ = try await pieces.call(Pieces.openMixStem, [.string(gone), .string("flac")])  // a transcode of the shared stem
            #expect(try await pieces.call(Pieces.get, [.string(gone)]).isEmpty == false)
            let countProperty = { try await pieces.client.call(destination: PiecesFixture.busName, path: PiecesFixture.path,
                                                               interface: "org.freedesktop.DBus.Properties", member: "Get",
                                                               [.string(PiecesFixture.interface), .string(Pieces.count.name)])
                                      .first?.variantValue }
            #expect(try await countProperty() == .uint32(2))
            #expect(try await pieces.storedObjects().objects.count == 4)

            _ = try await pieces.call(Pieces.delete, [.string(gone)])
            #expect(await deleted.next(timeout: .seconds(5))?.body.first?.stringValue == gone)
            await expectDBusError(EarshotErrorName.pieceNotFound.name) { _ = try await pieces.call(Pieces.get, [.string(gone)]) }
            await expectDBusError(EarshotErrorName.pieceNotFound.name) { _ = try await pieces.call(Pieces.delete, [.string(gone)]) }
            #expect(try await countProperty() == .uint32(1))
            // Only the shared mix stem is left; the kept piece still reads it.
            #expect(try await pieces.storedObjects().objects == [TestMedia.sha256(Array(try Data(contentsOf: wav)))])
            let stem = try readAll(try await pieces.call(Pieces.openMixStem, [.string(keep), .string("wave")]).first)
            #expect(stem == Array(try Data(contentsOf: wav)))
        }
    }
}
