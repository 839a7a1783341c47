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
                try await pieces.drop(["Title": .string(title), "Tempo": .double(tempo), "MixStemPath": .string(wav.path)]
                    .merging(fields) { _, new in new })
            }
            let alpha = try await drop("Alpha groove", 90, ["Tonality": .string("tonal"), "Scale": major, "Root": .byte(0),
                                                            "TimeSignatureUpper": .byte(4), "TimeSignatureLower": .byte(4)])
            let beta = try await drop("Beta", 120, ["Tonality": .string("tonal"), "Scale": major, "Root": .byte(7),
                                                    "TimeSignatureUpper": .byte(3), "TimeSignatureLower": .byte(4), "BasedOn": .strings([alpha])])
            let middle = try await pieces.get(beta)["CreatedAt"]?.stringValue ?? ""
            let gamma = try await drop("Gamma groove", 128, ["Tonality": .string("atonal"), "BasedOn": .strings([beta])])
            let delta = try await drop("delta", 140, ["BasedOn": .strings([beta, alpha])])
            let hidden = try await drop("Hidden", 100, ["Listed": .boolean(false)])

            #expect(try await pieces.list([:]).total == 5)  // the caller's own unlisted piece too
            #expect(try await pieces.list([:]).ids == [alpha, beta, gamma, delta, hidden])
            #expect(try await pieces.list(["Descending": .boolean(true), "Limit": .uint32(2)]).ids == [hidden, delta])
            let page = try await pieces.list(["Offset": .uint32(1), "Limit": .uint32(2)])
            #expect(page.ids == [beta, gamma])
            #expect(page.total == 5)
            #expect(try await pieces.list(["TitleContains": .string("GROOVE")]).ids == [alpha, gamma])
            #expect(try await pieces.list(["TitleContains": .string("%")]).total == 0)
            let range = try await pieces.list(["TempoMin": .double(100), "TempoMax": .uint32(130)])
            #expect(range.ids == [beta, gamma, hidden])
            #expect(try await pieces.list(["Tonality": .string("tonal"), "TempoMin": .double(100)]).ids == [beta])
            #expect(try await pieces.list(["Tonality": .string("tonal"), "Root": .byte(7)]).ids == [beta])
            #expect(try await pieces.list(["TimeSignatureUpper": .byte(4), "TimeSignatureLower": .byte(4)]).ids == [alpha])
            #expect(try await pieces.list(["BasedOn": .string(beta)]).ids == [gamma, delta])
            let author = try #require(try await pieces.get(alpha)["Author"]?.stringValue)
            #expect(try await pieces.list(["Author": .string(author)]).total == 5)
            #expect(try await pieces.list(["Author": .string("somebody-else")]).total == 0)
            #expect(try await pieces.list(["CreatedAfter": .string(middle)]).ids == [gamma, delta, hidden])
            #expect(try await pieces.list(["CreatedBefore": .string(middle)]).ids == [alpha])
            #expect(try await pieces.list(["SortBy": .string("title")]).ids == [alpha, beta, gamma, hidden, delta])  // SQLite's binary order
            #expect(try await pieces.list(["SortBy": .string("tempo"), "Descending": .boolean(true)]).ids == [delta, gamma, beta, hidden, alpha])
            #expect(try await pieces.list(["SortBy": .string("length")]).total == 5)

            for bad: [String: DBusValue] in [["Limit": .uint32(501)], ["Limit": .uint32(0)], ["SortBy": .string("colour")],
                                             ["Tonality": .string("major")], ["CreatedAfter": .string("yesterday")],
                                             ["Wobble": .boolean(true)], ["TempoMin": .string("fast")]] {
                await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") { _ = try await pieces.list(bad) }
            }
            await expectDBusError("org.earshot.Error.InvalidData") {
                _ = try await pieces.list(["TempoMin": .double(130), "TempoMax": .double(120)])
            }

            // Lineage, transitively, nearest first.
            let lineage = try await pieces.call("Lineage", [.string(gamma)])
            #expect(lineage.first?.stringArrayValue == [beta, alpha])
            #expect(lineage.last?.stringArrayValue == [])
            let roots = try await pieces.call("Lineage", [.string(alpha)])
            #expect(roots.first?.stringArrayValue == [])
            #expect(roots.last?.stringArrayValue == [beta, delta, gamma])
            await expectDBusError("org.earshot.Error.PieceNotFound") { _ = try await pieces.call("Lineage", [.string("x")]) }
        }
    }

    @Test(arguments: Backend.allCases) func deleteRemovesThePieceAndItsFiles(backend: Backend) async throws {
        try await PiecesFixture.with(backend) { pieces in
            let wav = pieces.file("mix.wav"), other = pieces.file("other.wav"), cover = pieces.file("cover.png")
            try Data(TestMedia.wav(seconds: 1)).write(to: wav)
            try Data(TestMedia.wav(seconds: 1, frequency: 880)).write(to: other)
            try await TestMedia.image(cover, width: 640, height: 640)
            let deleted = try await pieces.client.subscribe(MatchRule(sender: PiecesFixture.busName, interface: PiecesFixture.busName,
                                                                      member: "PieceDeleted"))
            let keep = try await pieces.drop(["Title": .string("Keep"), "MixStemPath": .string(wav.path)])
            let gone = try await pieces.drop(["Title": .string("Gone"), "MixStemPath": .string(wav.path),
                                              "PreviewPath": .string(other.path), "CoverImagePath": .string(cover.path)])
            _ = try await pieces.call("OpenMixStem", [.string(gone), .string("flac")])  // a transcode of the shared stem
            #expect(try await pieces.call("Get", [.string(gone)]).isEmpty == false)
            let countProperty = { try await pieces.client.call(destination: PiecesFixture.busName, path: PiecesFixture.path,
                                                               interface: "org.freedesktop.DBus.Properties", member: "Get",
                                                               [.string(PiecesFixture.busName), .string("Count")]).first?.variantValue }
            #expect(try await countProperty() == .uint32(2))
            #expect(try await pieces.storedObjects().objects.count == 4)

            _ = try await pieces.call("Delete", [.string(gone)])
            #expect(await deleted.next(timeout: .seconds(5))?.body.first?.stringValue == gone)
            await expectDBusError("org.earshot.Error.PieceNotFound") { _ = try await pieces.call("Get", [.string(gone)]) }
            await expectDBusError("org.earshot.Error.PieceNotFound") { _ = try await pieces.call("Delete", [.string(gone)]) }
            #expect(try await countProperty() == .uint32(1))
            // Only the shared mix stem is left; the kept piece still reads it.
            #expect(try await pieces.storedObjects().objects == [TestMedia.sha256(Array(try Data(contentsOf: wav)))])
            let stem = try readAll(try await pieces.call("OpenMixStem", [.string(keep), .string("wave")]).first)
            #expect(stem == Array(try Data(contentsOf: wav)))
        }
    }
}
