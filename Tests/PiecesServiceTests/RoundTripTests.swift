import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

@Suite struct RoundTripTests {
    /// Every field of a piece's metadata.
    static var metadata: PieceMetadata {
        var metadata = PieceMetadata()
        metadata.description = "A short riff"
        metadata.tempo = 120.5
        (metadata.loopStartMicroseconds, metadata.loopEndMicroseconds) = (500_000, 1_500_000)
        metadata.timeSignature = (7, 8)
        (metadata.tonality, metadata.scale, metadata.root) = (.tonal, PiecesFixture.major, 9)
        metadata.listed = true
        return metadata
    }

    /// A piece with every field, each of its four assets (mix stem, preview, cover image,
    /// attachment) as `asset` gives its file.
    static func everyField(_ files: [URL], _ asset: (URL) throws -> PieceDrop.Asset) throws -> PieceDrop {
        var piece = PieceDrop(title: "Riff in A 🎸", mixStem: try asset(files[0]), metadata: metadata)
        (piece.preview, piece.coverImage) = (try asset(files[1]), try asset(files[2]))
        piece.attachment = (try asset(files[3]), "text/plain")
        return piece
    }

    func checkEveryField(_ piece: Piece, id: String) {
        #expect(piece.id == id)
        #expect(piece.title == "Riff in A 🎸")
        #expect(piece.metadata == Self.metadata)
        #expect(piece.lengthMicroseconds == 2_000_000)
        #expect(piece.sampleRate == 44100)
        #expect(piece.channels == 2)
        #expect(!piece.author.isEmpty)
        // RFC 3339 in UTC to the millisecond, and recent.
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let createdDate = try? style.parse(piece.createdAt)
        #expect(piece.createdAt.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(piece.createdAt)")
        #expect(createdDate.map { abs($0.timeIntervalSinceNow) < 600 } == true, "\(piece.createdAt)")
        // A sine at half scale: about -9 LUFS, true peak about -6 dBTP.
        let loudness = piece.loudnessLufs ?? 0
        #expect(loudness > -12 && loudness < -6, "\(loudness)")
        let peak = piece.truePeakDbtp ?? 0
        #expect(peak > -7 && peak < -5, "\(peak)")
        // The assets, which the client reports by the contract's names.
        for key in Pieces.assets.map({ StoredKeys.has($0.fd.name) }) { #expect(piece.values[key]?.boolValue == true, "\(key.name)") }
        #expect(piece.values[StoredKeys.format(PieceKeys.mixStem.fd.name)]?.stringValue == "wave")
        #expect(piece.values[StoredKeys.format(PieceKeys.preview.fd.name)]?.stringValue == "flac")
        #expect(piece.values[StoredKeys.format(PieceKeys.coverImage.fd.name)]?.stringValue == "png")
        #expect(piece.values[PieceKeys.attachmentMimeType]?.stringValue == "text/plain")
        #expect(piece.values[StoredKeys.size(PieceKeys.attachment.fd.name)]?.uint64Value == 11)
    }

    @Test(arguments: Backend.allCases) func everyFieldAndAssetByDescriptorAndByPath(backend: Backend) async throws {
        try await PiecesFixture.with(backend) { pieces in
            let wav = pieces.file("mix.wav"), flac = pieces.file("preview.flac"), cover = pieces.file("cover.png")
            let attachment = pieces.file("notes.txt")
            let wavBytes = TestMedia.wav(seconds: 2, channels: 2)
            try Data(wavBytes).write(to: wav)
            try await TestMedia.convert(wav, to: flac)
            try await TestMedia.image(cover, width: 640, height: 640)
            try Data("hello notes".utf8).write(to: attachment)
            let changes = try await pieces.changes()

            let byFD = try await pieces.drop(try Self.everyField([wav, flac, cover, attachment]) { .descriptor(try PiecesFixture.fd($0)) })
            let byPath = try await pieces.drop(try Self.everyField([wav, flac, cover, attachment]) { .path($0.path) })
            #expect(byFD != byPath)
            let dropped = try #require(await changes.next(within: .seconds(5)) { $0.dropped != nil }?.dropped)
            #expect(dropped.id == byFD)
            #expect(dropped.summary[PieceKeys.title]?.stringValue == "Riff in A 🎸")

            for id in [byFD, byPath] {
                checkEveryField(try await pieces.get(id), id: id)
                // The WAV mix stem comes back byte for byte.
                #expect(try await pieces.mixStem(id) == wavBytes)
                #expect(try readAll(try await pieces.pieces.openCoverImage(id)) == Array(try Data(contentsOf: cover)))
                #expect(try readAll(try await pieces.pieces.openPreview(id, format: .flac)) == Array(try Data(contentsOf: flac)))
                let opened = try await pieces.pieces.openAttachment(id)
                #expect(try readAll(opened.fd) == Array("hello notes".utf8))
                #expect(opened.mimeType == "text/plain")
                let exported = pieces.file("export-\(id).txt")
                #expect(try await pieces.pieces.exportAttachment(id, to: exported.path) == "text/plain")
                #expect(try Data(contentsOf: exported) == Data("hello notes".utf8))
            }
            // Identical content is stored once.
            let stored = try await pieces.storedObjects()
            #expect(stored.objects.count == 4)
            #expect(stored.objects.contains(TestMedia.sha256(wavBytes)))
            #expect(stored.staged.isEmpty)
            #expect(try await pieces.get(byFD).id == byFD)
        }
    }

    /// A drop's analysis maps none of FFmpeg's libraries (libavutil would bring twenty-odd
    /// more, libstdc++ among them, which a process cannot unload), and two drops of the same
    /// audio measure the same.
    @Test func aDropMapsNoFFmpegLibrary() async throws {
        try await PiecesFixture.with(.sqlite) { pieces in
            let wav = pieces.file("mix.wav")
            try Data(TestMedia.wav(seconds: 2, rate: 44100, channels: 2)).write(to: wav)
            func mapsFFmpeg() throws -> Bool {
                try pieces.service.maps("libavutil") || pieces.service.maps("libswresample")
            }
            let first = try await pieces.drop(.titled("First", stem: wav))
            let second = try await pieces.drop(.titled("Second", stem: wav))
            #expect(try !mapsFFmpeg(), "FFmpeg's libraries mapped by a drop")
            let pieceFirst = try await pieces.get(first)
            let pieceSecond = try await pieces.get(second)
            #expect(pieceFirst.truePeakDbtp != nil)
            #expect(pieceSecond.truePeakDbtp == pieceFirst.truePeakDbtp)
            #expect(pieceSecond.loudnessLufs == pieceFirst.loudnessLufs)
        }
    }

    /// libsndfile, with the codec libraries it brings, is mapped at the first drop, not at
    /// start, and unmapped once the service has gone quiet; the next drop opens it again.
    @Test func libsndfileIsOpenedForWorkAndClosedOnceQuiet() async throws {
        try await PiecesFixture.with(.sqlite) { pieces in
            let wav = pieces.file("mix.wav")
            try Data(TestMedia.wav(seconds: 2, rate: 44100, channels: 2)).write(to: wav)
            func mapsLibsndfile() throws -> Bool {
                try pieces.service.maps("libsndfile") || pieces.service.maps("libvorbisenc") || pieces.service.maps("libFLAC")
            }
            #expect(try !mapsLibsndfile(), "libsndfile mapped at start")
            let first = try await pieces.drop(.titled("First", stem: wav))
            #expect(try mapsLibsndfile(), "libsndfile not mapped after a drop")
            // Quiet: no call for one trim interval (10 s) after one with calls.
            let deadline = ContinuousClock.now + .seconds(40)
            while try mapsLibsndfile(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(250)) }
            #expect(try !mapsLibsndfile(), "libsndfile still mapped 40 s after the last call")
            let second = try await pieces.drop(.titled("Second", stem: wav))
            #expect(try mapsLibsndfile())
            let pieceFirst = try await pieces.get(first)
            let pieceSecond = try await pieces.get(second)
            #expect(pieceSecond.loudnessLufs != nil && pieceSecond.loudnessLufs == pieceFirst.loudnessLufs)
            #expect(pieceSecond.sampleRate == 44100 && pieceSecond.channels == 2)
        }
    }

    @Test(arguments: Backend.allCases) func everyTranscodeOpensWithTheRightDuration(backend: Backend) async throws {
        try await PiecesFixture.with(backend) { pieces in
            let wav = pieces.file("mix.wav")
            try Data(TestMedia.wav(seconds: 3, rate: 48000, channels: 2)).write(to: wav)
            let id = try await pieces.drop(.titled("Transcodes", stem: wav))
            let expected: [PieceAudioFormat: (container: String, codec: String)] = [
                .wave: ("wav", "pcm_s16le"), .flac: ("flac", "flac"), .oggVorbis: ("ogg", "vorbis"),
                .aacM4A: ("mov,mp4,m4a,3gp,3g2,mj2", "aac"),
            ]
            // FFmpeg's codec and container libraries are mapped at the first AAC export, not
            // before (a drop's analysis uses none of FFmpeg).
            func mapsCodecLibraries() throws -> Bool {
                try pieces.service.maps("libavcodec") || pieces.service.maps("libavformat")
            }
            #expect(try !mapsCodecLibraries(), "libavcodec mapped before any AAC export")
            for (format, want) in expected.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                #expect(try mapsCodecLibraries() == (format.rawValue > "aacM4A"), "before \(format)")
                let out = pieces.file("export.\(format)")
                try await pieces.pieces.exportMixStem(id, format: format, to: out.path)
                let probe = try await TestMedia.probe(out)
                #expect(probe.container == want.container, "\(format)")
                #expect(probe.codec == want.codec, "\(format)")
                #expect(abs(probe.seconds - 3) <= 0.03, "\(format): \(probe.seconds) s")
                // A second request reuses the stored transcode.
                let again = pieces.file("again.\(format)")
                try await pieces.pieces.exportMixStem(id, format: format, to: again.path)
                #expect(try Data(contentsOf: again) == Data(contentsOf: out), "\(format)")
            }
            let transcoded = pieces.service.logText.components(separatedBy: "transcoded to").count - 1
            #expect(transcoded == 3, "wave was dropped; flac, oggVorbis and aacM4A were made once each")
            // The preview falls back to the mix stem.
            #expect(try readAll(try await pieces.pieces.openPreview(id)) == Array(try Data(contentsOf: wav)))
            // A format the client cannot spell, sent raw.
            await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") {
                _ = try await pieces.call(raw: Pieces.openMixStem, [.string(id), .string("mp3")])
            }
            await expectDBusError(EarshotErrorName.assetNotFound.name) { _ = try await pieces.pieces.openCoverImage(id) }
            await expectDBusError(EarshotErrorName.pieceNotFound.name) { _ = try await pieces.get("nope") }
        }
    }
}
