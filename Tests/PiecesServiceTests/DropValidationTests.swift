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
            let mix: [String: DBusValue] = ["MixStemPath": .string(wav.path)]
            func piece(_ fields: [String: DBusValue]) -> [String: DBusValue] {
                ["Title": .string("t")].merging(mix) { _, new in new }.merging(fields) { _, new in new }
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
            let existing = try await pieces.drop(piece(["Title": .string(String(repeating: "🎹", count: 50))]))
            let major: DBusValue = .array(.boolean, [true, false, true, false, true, true, false, true, false, true, false, true].map { .boolean($0) })

            let refused: [(String, [String: DBusValue], String)] = [
                ("TitleTooShort", ["Title": .string("")], "Title"),
                ("TitleTooLong", ["Title": .string(String(repeating: "🎹", count: 51))], "Title"),
                ("PieceTooShort", ["LengthMicroseconds": .uint64(0)], "LengthMicroseconds"),
                ("PieceTooLong", ["LengthMicroseconds": .uint64(1_200_000_001)], "LengthMicroseconds"),
                ("TempoTooLow", ["Tempo": .double(0.999)], "Tempo"),
                ("TempoTooHigh", ["Tempo": .double(1000)], "Tempo"),
                ("InvalidLoopMarkers", ["LoopStartMicroseconds": .uint64(0), "LoopEndMicroseconds": .uint64(1_000_001)], "LoopEnd"),
                ("InvalidLoopMarkers", ["LoopStartMicroseconds": .uint64(5), "LoopEndMicroseconds": .uint64(5)], "LoopStart"),
                ("InvalidLoopMarkers", ["LoopStartMicroseconds": .uint64(9), "LoopEndMicroseconds": .uint64(5)], "LoopStart"),
                ("InvalidLoopMarkers", ["LoopStartMicroseconds": .uint64(0)], "Loop"),
                ("InvalidTimeSignature", ["TimeSignatureUpper": .byte(4), "TimeSignatureLower": .byte(5)], "4/5"),
                ("InvalidTimeSignature", ["TimeSignatureUpper": .byte(17), "TimeSignatureLower": .byte(4)], "17/4"),
                ("InvalidTonality", ["Tonality": .string("tonal"), "Root": .byte(0)], "Scale"),
                ("InvalidTonality", ["Tonality": .string("tonal"), "Scale": .array(.boolean, Array(repeating: .boolean(false), count: 12)),
                                     "Root": .byte(0)], "Scale"),
                ("InvalidTonality", ["Tonality": .string("tonal"), "Scale": major, "Root": .byte(1)], "Root"),
                ("BasedOnNotFound", ["BasedOn": .strings([existing, "no-such-piece"])], "no-such-piece"),
                ("InvalidAudio", ["MixStemPath": .string(text.path)], "MixStem"),
                ("InvalidCoverImage", ["CoverImagePath": .string(wideCover.path)], "642"),
                ("InvalidCoverImage", ["CoverImagePath": .string(text.path)], "CoverImage"),
                ("AttachmentTooLarge", ["AttachmentPath": .string(big.path), "AttachmentMimeType": .string("application/zip")], "Attachment"),
                ("InvalidData", ["LengthMicroseconds": .uint64(1_020_000)], "1%"),
            ]
            for (name, fields, mention) in refused {
                let error = await expectDBusError("org.earshot.Error." + name) { try await pieces.drop(piece(fields)) }
                #expect(error?.message.contains(mention) == true, "\(name): \(error?.message ?? "")")
            }
            let invalidArgs: [([String: DBusValue], String)] = [
                (["Title": .uint32(3)], "Title"),
                (["Tempo": .string("fast")], "Tempo"),
                (["Colour": .string("blue")], "Colour"),
                (["MixStem": .string("x")], "MixStem"),
                (["MixStem": try PiecesFixture.fd(wav), "MixStemPath": .string(wav.path)], "MixStem"),
                (["MixStemPath": .string("relative.wav")], "MixStemPath"),
            ]
            for (fields, key) in invalidArgs {
                let error = await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") { try await pieces.drop(piece(fields)) }
                #expect(error?.message.contains(key) == true, "\(error?.message ?? "")")
            }
            await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") {
                try await pieces.drop(["Title": .string("no audio")])
            }

            // The accepted boundaries.
            try await pieces.drop(piece(["Tempo": .double(1), "LoopStartMicroseconds": .uint64(0), "LoopEndMicroseconds": .uint64(1_000_000)]))
            try await pieces.drop(piece(["Tempo": .double(999.999), "TimeSignatureUpper": .byte(16), "TimeSignatureLower": .byte(16)]))
            try await pieces.drop(piece(["LengthMicroseconds": .uint64(1_009_000), "CoverImagePath": .string(jpeg.path)]))
            try await pieces.drop(piece(["AttachmentPath": .string(limit.path), "AttachmentMimeType": .string("application/zip")]))
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
            let id = try await pieces.drop(["Title": .string("Long"), "MixStemPath": .string(exact.path),
                                            "LengthMicroseconds": .uint64(1_200_000_000)])
            #expect(try await pieces.get(id)["LengthMicroseconds"]?.uint64Value == 1_200_000_000)
            await expectDBusError("org.earshot.Error.PieceTooLong") {
                try await pieces.drop(["Title": .string("Too long"), "MixStemPath": .string(over.path)])
            }
        }
    }
}
