import ContractCore
import EarshotContract
import EarshotDBus
import Foundation
import Testing

@Suite struct PiecesTests {
    private typealias PieceKeys = PiecesContract.Manager.PieceKeys
    private typealias StoredKeys = PiecesContract.Manager.StoredKeys

    /// A second of a 440 Hz sine, 16 kHz mono 16-bit, as a WAV file.
    static func writeWave(to url: URL) throws {
        let frames = 16000
        var data: [UInt8] = []
        for index in 0..<frames {
            let sample = Int16(8000 * sin(Double(index) * 2 * .pi * 440 / 16000))
            data += [UInt8(truncatingIfNeeded: sample), UInt8(truncatingIfNeeded: sample >> 8)]
        }
        func u32(_ v: Int) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 24 & 0xff)] }
        func u16(_ v: Int) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8 & 0xff)] }
        let header = Array("RIFF".utf8) + u32(36 + data.count) + Array("WAVEfmt ".utf8) + u32(16) + u16(1) + u16(1)
            + u32(16000) + u32(32000) + u16(2) + u16(16) + Array("data".utf8) + u32(data.count)
        try Data(header + data).write(to: url)
    }

    @Test func dropListGetExportLineageDelete() async throws {
        try await ClientFixture.with(["earshot-pieces"]) { fixture in
            let wave = fixture.file("hello.wav")
            try Self.writeWave(to: wave)

            let dropped = try await fixture.earshot(["pieces", "drop", "--title", "Hello", "--tempo", "96", "--time-signature", "3/4",
                                                     wave.path, "--json"])
            #expect(dropped.status == 0, "\(dropped)")
            let id = try #require(try dropped.object()["id"] as? String)
            let child = try await fixture.earshot(["pieces", "drop", "--title", "Hello again", "--based-on", id, wave.path])
            #expect(child.status == 0, "\(child)")
            let childID = child.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(UUID(uuidString: childID) != nil, "\(child)")

            let list = try await fixture.earshot(["pieces", "list", "--sort-by", "title", "--json"])
            #expect(list.status == 0, "\(list)")
            let page = try list.object()
            #expect(page["total"] as? Int == 2)
            let pieces = try #require(page["pieces"] as? [[String: Any]])
            #expect(pieces.map { $0[StoredKeys.id.name] as? String } == [id, childID])
            #expect(pieces.first?[PieceKeys.title.name] as? String == "Hello")
            let filtered = try await fixture.earshot(["pieces", "list", "--tempo-min", "90", "--tempo-max", "100", "--json"])
            #expect(try filtered.object()["total"] as? Int == 1)
            let table = try await fixture.earshot(["pieces", "list", "--title-contains", "again"])
            #expect(table.lines.count == 3 && table.lines[1].hasPrefix(childID) && table.lines[2] == "pieces 1–1 of 1", "\(table)")

            let get = try await fixture.earshot(["pieces", "get", id, "--json"])
            #expect(get.status == 0, "\(get)")
            let piece = try get.object()
            #expect(piece[StoredKeys.id.name] as? String == id)
            #expect(piece[PieceKeys.title.name] as? String == "Hello")
            #expect(piece[PieceKeys.tempo.name] as? Int == 96)
            #expect(piece[StoredKeys.sampleRate.name] as? Int == 16000)
            #expect(piece[PieceKeys.timeSignatureUpper.name] as? Int == 3 && piece[PieceKeys.timeSignatureLower.name] as? Int == 4)
            #expect(piece[PieceKeys.lengthMicroseconds.name] as? Int == 1_000_000)
            let text = try await fixture.earshot(["pieces", "get", id])
            #expect(text.lines.contains { $0.hasPrefix("Title ") && $0.hasSuffix("  Hello") }, "\(text)")

            let flac = fixture.file("hello.flac")
            let export = try await fixture.earshot(["pieces", "export", id, "--format", "flac", "--out", flac.path, "--json"])
            #expect(export.status == 0, "\(export)")
            #expect(try export.object()["path"] as? String == flac.standardizedFileURL.path)
            #expect(try Data(contentsOf: flac).prefix(4) == Data("fLaC".utf8))

            let lineage = try await fixture.earshot(["pieces", "lineage", id, "--json"])
            let family = try lineage.object()
            #expect(family["ancestors"] as? [String] == [])
            #expect(family["descendants"] as? [String] == [childID])

            for victim in [childID, id] {
                let deleted = try await fixture.earshot(["pieces", "delete", victim])
                #expect(deleted.status == 0 && deleted.stdout == "deleted \(victim)\n", "\(deleted)")
            }
            let gone = try await fixture.earshot(["pieces", "get", id])
            #expect(gone.status == 1)
            #expect(gone.stderr.hasPrefix("earshot: \(EarshotErrorName.pieceNotFound.name): "), "\(gone)")
            let empty = try await fixture.earshot(["pieces", "list", "--json"])
            #expect(try empty.object()["total"] as? Int == 0)
        }
    }

    @Test func dropRefusals() async throws {
        try await ClientFixture.with(["earshot-pieces"]) { fixture in
            let missing = try await fixture.earshot(["pieces", "drop", "--title", "Nothing", fixture.file("absent.wav").path])
            #expect(missing.status == 1)
            #expect(missing.stderr.hasPrefix("earshot: cannot open \(fixture.file("absent.wav").path): No such file"), "\(missing)")
            let wave = fixture.file("fast.wav")
            try Self.writeWave(to: wave)
            let fast = try await fixture.earshot(["pieces", "drop", "--title", "Fast", "--tempo", "1000", wave.path])
            #expect(fast.status == 1)
            #expect(fast.stderr.hasPrefix("earshot: \(EarshotErrorName.tempoTooHigh.name): "), "\(fast)")
        }
    }
}
