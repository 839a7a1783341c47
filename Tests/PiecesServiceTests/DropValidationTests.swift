import ContractCore
import EarshotClient
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
            // The keys of Drop's piece, as the contract names them (and the service's messages).
            let title = PieceKeys.title.name, length = PieceKeys.lengthMicroseconds.name, tempo = PieceKeys.tempo.name
            let scale = PieceKeys.scale.name, root = PieceKeys.root.name
            let mixStem = PieceKeys.mixStem, coverImage = PieceKeys.coverImage, attachment = PieceKeys.attachment
            func piece(_ configure: (inout PieceDrop) -> Void) -> PieceDrop { .titled("t", stem: wav, configure) }
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
            let existing = try await pieces.drop(.titled(String(repeating: "🎹", count: 50), stem: wav))

            // The client leaves these rules to the service: these are the service's answers.
            let refused: [(EarshotErrorName, (inout PieceDrop) -> Void, String)] = [
                (.titleTooShort, { $0.title = "" }, title),
                (.titleTooLong, { $0.title = String(repeating: "🎹", count: 51) }, title),
                (.pieceTooShort, { $0.lengthMicroseconds = 0 }, length),
                (.pieceTooLong, { $0.lengthMicroseconds = 1_200_000_001 }, length),
                (.tempoTooLow, { $0.tempo = 0.999 }, tempo),
                (.tempoTooHigh, { $0.tempo = 1000 }, tempo),
                (.invalidLoopMarkers, { $0.loopStartMicroseconds = 0; $0.loopEndMicroseconds = 1_000_001 }, "LoopEnd"),
                (.invalidLoopMarkers, { $0.loopStartMicroseconds = 5; $0.loopEndMicroseconds = 5 }, "LoopStart"),
                (.invalidLoopMarkers, { $0.loopStartMicroseconds = 9; $0.loopEndMicroseconds = 5 }, "LoopStart"),
                (.invalidLoopMarkers, { $0.loopStartMicroseconds = 0 }, "Loop"),
                (.invalidTimeSignature, { $0.timeSignature = (4, 5) }, "4/5"),
                (.invalidTimeSignature, { $0.timeSignature = (17, 4) }, "17/4"),
                (.invalidTonality, { $0.tonality = .tonal; $0.root = 0 }, scale),
                (.invalidTonality, { $0.tonality = .tonal; $0.scale = Array(repeating: false, count: 12); $0.root = 0 }, scale),
                (.invalidTonality, { $0.tonality = .tonal; $0.scale = PiecesFixture.major; $0.root = 1 }, root),
                (.basedOnNotFound, { $0.basedOn = [existing, "no-such-piece"] }, "no-such-piece"),
                (.invalidAudio, { $0.mixStem = .path(text.path) }, mixStem.fd.name),
                (.invalidCoverImage, { $0.coverImage = .path(wideCover.path) }, "642"),
                (.invalidCoverImage, { $0.coverImage = .path(text.path) }, coverImage.fd.name),
                (.attachmentTooLarge, { $0.attachment = (.path(big.path), "application/zip") }, attachment.fd.name),
                (.invalidData, { $0.lengthMicroseconds = 1_020_000 }, "1%"),
            ]
            for (refusal, configure, mention) in refused {
                let error = await expectDBusError(refusal.name) { try await pieces.drop(piece(configure)) }
                #expect(error?.message.contains(mention) == true, "\(refusal.shortName): \(error?.message ?? "")")
            }
            // Pieces the client refuses to send or cannot spell, sent raw.
            let mix: [String: DBusValue] = [title: .string("t"), mixStem.path.name: .string(wav.path)]
            let invalidArgs: [([String: DBusValue], String)] = [
                ([title: .uint32(3)], title),
                ([tempo: .string("fast")], tempo),
                (["Colour": .string("blue")], "Colour"),
                ([mixStem.fd.name: .string("x")], mixStem.fd.name),
                ([mixStem.fd.name: .unixFD(try PiecesFixture.fd(wav)), mixStem.path.name: .string(wav.path)], mixStem.fd.name),
            ]
            for (fields, key) in invalidArgs {
                let error = await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") {
                    try await pieces.drop(raw: mix.merging(fields) { _, new in new })
                }
                #expect(error?.message.contains(key) == true, "\(error?.message ?? "")")
            }
            await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") { try await pieces.drop(raw: [title: .string("no audio")]) }
            let relative = await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") {
                try await pieces.drop(piece { $0.mixStem = .path("relative.wav") })
            }
            #expect(relative?.message.contains(mixStem.path.name) == true, "\(relative?.message ?? "")")

            // The accepted boundaries.
            try await pieces.drop(piece { $0.tempo = 1; $0.loopStartMicroseconds = 0; $0.loopEndMicroseconds = 1_000_000 })
            try await pieces.drop(piece { $0.tempo = 999.999; $0.timeSignature = (16, 16) })
            try await pieces.drop(piece { $0.lengthMicroseconds = 1_009_000; $0.coverImage = .path(jpeg.path) })
            try await pieces.drop(piece { $0.attachment = (.path(limit.path), "application/zip") })
            // Refusals left nothing behind: only the accepted pieces' files are stored.
            #expect(try await pieces.list().total == 5)
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
            let id = try await pieces.drop(.titled("Long", stem: exact) { $0.lengthMicroseconds = 1_200_000_000 })
            #expect(try await pieces.get(id).lengthMicroseconds == 1_200_000_000)
            await expectDBusError(EarshotErrorName.pieceTooLong.name) { try await pieces.drop(.titled("Too long", stem: over)) }
        }
    }
}
