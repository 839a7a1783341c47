import ContractCore
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

@Suite struct DropValidationTests {
    @Test(arguments: Backend.allCases) func everyBoundaryOverTheBus(backend: Backend) async throws {
        try await PiecesFixture.with(backend) { pieces in
            let wav = pieces.file("mix.wav")
            try Data(TestMedia.wav(seconds: 1)).write(to: wav)
            // The keys of Drop's piece, as the contract names them.
            let title = PieceKeys.title.name, length = PieceKeys.lengthMicroseconds.name, tempo = PieceKeys.tempo.name
            let loopStart = PieceKeys.loopStartMicroseconds.name, loopEnd = PieceKeys.loopEndMicroseconds.name
            let upper = PieceKeys.timeSignatureUpper.name, lower = PieceKeys.timeSignatureLower.name
            let tonality = PieceKeys.tonality.name, scale = PieceKeys.scale.name, root = PieceKeys.root.name
            let mixStem = PieceKeys.mixStem, coverImage = PieceKeys.coverImage, attachment = PieceKeys.attachment
            let mimeType = PieceKeys.attachmentMimeType.name
            let mix: [String: DBusValue] = [mixStem.path.name: .string(wav.path)]
            func piece(_ fields: [String: DBusValue]) -> [String: DBusValue] {
                [title: .string("t")].merging(mix) { _, new in new }.merging(fields) { _, new in new }
            }
            let text = pieces.file("notes.txt")
            try Data("not audio".utf8).write(to: text)
            let wideCover = pieces.file("wide.png")
            try await TestMedia.image(wideCover, width: 642, height: 640)  // ffmpeg rounds odd sizes
            let jpeg = pieces.file("cover.jpg")
            try await TestMedia.image(jpeg, width: 640, height: 640)
            let big = pieces.file("big.bin")
            try Data(count: 30 * 1024 * 1024 + 1).write(to: big)
            let limit = pieces.file("limit.bin")
            try Data(count: 30 * 1024 * 1024).write(to: limit)
            let existing = try await pieces.drop(piece([title: .string(String(repeating: "🎹", count: 50))]))
            let major: DBusValue = .array(.boolean, [true, false, true, false, true, true, false, true, false, true, false, true].map { .boolean($0) })

            let refused: [(EarshotErrorName, [String: DBusValue], String)] = [
                (.titleTooShort, [title: .string("")], title),
                (.titleTooLong, [title: .string(String(repeating: "🎹", count: 51))], title),
                (.pieceTooShort, [length: .uint64(0)], length),
                (.pieceTooLong, [length: .uint64(1_200_000_001)], length),
                (.tempoTooLow, [tempo: .double(0.999)], tempo),
                (.tempoTooHigh, [tempo: .double(1000)], tempo),
                (.invalidLoopMarkers, [loopStart: .uint64(0), loopEnd: .uint64(1_000_001)], "LoopEnd"),
                (.invalidLoopMarkers, [loopStart: .uint64(5), loopEnd: .uint64(5)], "LoopStart"),
                (.invalidLoopMarkers, [loopStart: .uint64(9), loopEnd: .uint64(5)], "LoopStart"),
                (.invalidLoopMarkers, [loopStart: .uint64(0)], "Loop"),
                (.invalidTimeSignature, [upper: .byte(4), lower: .byte(5)], "4/5"),
                (.invalidTimeSignature, [upper: .byte(17), lower: .byte(4)], "17/4"),
                (.invalidTonality, [tonality: .string("tonal"), root: .byte(0)], scale),
                (.invalidTonality, [tonality: .string("tonal"), scale: .array(.boolean, Array(repeating: .boolean(false), count: 12)),
                                    root: .byte(0)], scale),
                (.invalidTonality, [tonality: .string("tonal"), scale: major, root: .byte(1)], root),
                (.basedOnNotFound, [PieceKeys.basedOn.name: .strings([existing, "no-such-piece"])], "no-such-piece"),
                (.invalidAudio, [mixStem.path.name: .string(text.path)], mixStem.fd.name),
                (.invalidCoverImage, [coverImage.path.name: .string(wideCover.path)], "642"),
                (.invalidCoverImage, [coverImage.path.name: .string(text.path)], coverImage.fd.name),
                (.attachmentTooLarge, [attachment.path.name: .string(big.path), mimeType: .string("application/zip")], attachment.fd.name),
                (.invalidData, [length: .uint64(1_020_000)], "1%"),
            ]
            for (refusal, fields, mention) in refused {
                let error = await expectDBusError(refusal.name) { try await pieces.drop(piece(fields)) }
                #expect(error?.message.contains(mention) == true, "\(refusal.shortName): \(error?.message ?? "")")
            }
            let invalidArgs: [([String: DBusValue], String)] = [
                ([title: .uint32(3)], title),
                ([tempo: .string("fast")], tempo),
                (["Colour": .string("blue")], "Colour"),
                ([mixStem.fd.name: .string("x")], mixStem.fd.name),
                ([mixStem.fd.name: try PiecesFixture.fd(wav), mixStem.path.name: .string(wav.path)], mixStem.fd.name),
                ([mixStem.path.name: .string("relative.wav")], mixStem.path.name),
            ]
            for (fields, key) in invalidArgs {
                let error = await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") { try await pieces.drop(piece(fields)) }
                #expect(error?.message.contains(key) == true, "\(error?.message ?? "")")
            }
            await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") {
                try await pieces.drop([title: .string("no audio")])
            }

            // The accepted boundaries.
            try await pieces.drop(piece([tempo: .double(1), loopStart: .uint64(0), loopEnd: .uint64(1_000_000)]))
            try await pieces.drop(piece([tempo: .double(999.999), upper: .byte(16), lower: .byte(16)]))
            try await pieces.drop(piece([length: .uint64(1_009_000), coverImage.path.name: .string(jpeg.path)]))
            try await pieces.drop(piece([attachment.path.name: .string(limit.path), mimeType: .string("application/zip")]))
            // Refusals left nothing behind: only the accepted pieces' files are stored.
            #expect(try await pieces.list([:]).total == 5)
            #expect(try await pieces.storedObjects().staged.isEmpty)
            #expect(try await pieces.storedObjects().objects.count == 3)  // the WAV, the JPEG and the 30 MiB attachment
        }
    }

    @Test(arguments: Backend.allCases) func twentyMinutesIsTheLongestPiece(backend: Backend) async throws {
        try await PiecesFixture.with(backend) { pieces in
            let frames = 8000 * 1200
            let exact = pieces.file("twenty.wav"), over = pieces.file("over.wav")
            try Data(TestMedia.longWav(frames: frames)).write(to: exact)
            try Data(TestMedia.longWav(frames: frames + 80)).write(to: over)
            let id = try await pieces.drop([PieceKeys.title.name: .string("Long"), PieceKeys.mixStem.path.name: .string(exact.path),
                                            PieceKeys.lengthMicroseconds.name: .uint64(1_200_000_000)])
            #expect(try await pieces.get(id)[PieceKeys.lengthMicroseconds.name]?.uint64Value == 1_200_000_000)
            await expectDBusError(EarshotErrorName.pieceTooLong.name) {
                try await pieces.drop([PieceKeys.title.name: .string("Too long"), PieceKeys.mixStem.path.name: .string(over.path)])
            }
        }
    }
}
