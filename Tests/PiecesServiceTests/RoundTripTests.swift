import ContractCore
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

@Suite struct RoundTripTests {
    static let major: [Bool] = [true, false, true, false, true, true, false, true, false, true, false, true]

    /// A piece with every field, its assets from `assets`.
    static func everyField(_ assets: [String: DBusValue]) -> [String: DBusValue] {
        let fields: [String: DBusValue] = [
            PieceKeys.title.name: .string("Riff in A 🎸"), PieceKeys.description.name: .string("A short riff"),
            PieceKeys.tempo.name: .double(120.5),
            PieceKeys.loopStartMicroseconds.name: .uint64(500_000), PieceKeys.loopEndMicroseconds.name: .uint64(1_500_000),
            PieceKeys.timeSignatureUpper.name: .byte(7), PieceKeys.timeSignatureLower.name: .byte(8),
            PieceKeys.tonality.name: .string("tonal"), PieceKeys.scale.name: .array(.boolean, major.map { .boolean($0) }),
            PieceKeys.root.name: .byte(9), PieceKeys.listed.name: .boolean(true),
            PieceKeys.attachmentMimeType.name: .string("text/plain"),
        ]
        return fields.merging(assets) { _, new in new }
    }

    func checkEveryField(_ piece: [String: DBusValue], id: String) {
        #expect(piece[StoredKeys.id.name]?.stringValue == id)
        #expect(piece[PieceKeys.title.name]?.stringValue == "Riff in A 🎸")
        #expect(piece[PieceKeys.description.name]?.stringValue == "A short riff")
        #expect(piece[PieceKeys.tempo.name]?.doubleValue == 120.5)
        #expect(piece[PieceKeys.lengthMicroseconds.name]?.uint64Value == 2_000_000)
        #expect(piece[PieceKeys.loopStartMicroseconds.name]?.uint64Value == 500_000)
        #expect(piece[PieceKeys.loopEndMicroseconds.name]?.uint64Value == 1_500_000)
        #expect(piece[PieceKeys.timeSignatureUpper.name] == .byte(7))
        #expect(piece[PieceKeys.timeSignatureLower.name] == .byte(8))
        #expect(piece[PieceKeys.tonality.name]?.stringValue == "tonal")
        #expect(piece[PieceKeys.scale.name]?.arrayValue?.compactMap(\.boolValue) == Self.major)
        #expect(piece[PieceKeys.root.name] == .byte(9))
        #expect(piece[PieceKeys.listed.name]?.boolValue == true)
        #expect(piece[StoredKeys.sampleRate.name]?.uint32Value == 44100)
        #expect(piece[StoredKeys.channels.name]?.uint32Value == 2)
        #expect(piece[StoredKeys.author.name]?.stringValue?.isEmpty == false)
        // RFC 3339 in UTC to the millisecond, and recent.
        let created = piece[StoredKeys.createdAt.name]?.stringValue ?? ""
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let createdDate = try? style.parse(created)
        #expect(created.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(created)")
        #expect(createdDate.map { abs($0.timeIntervalSinceNow) < 600 } == true, "\(created)")
        // A sine at half scale: about -9 LUFS, true peak about -6 dBTP.
        let loudness = piece[StoredKeys.loudnessLufs.name]?.doubleValue ?? 0
        #expect(loudness > -12 && loudness < -6, "\(loudness)")
        let peak = piece[StoredKeys.truePeakDbtp.name]?.doubleValue ?? 0
        #expect(peak > -7 && peak < -5, "\(peak)")
        for key in Pieces.assets.map({ StoredKeys.has($0.fd.name).name }) { #expect(piece[key]?.boolValue == true, "\(key)") }
        #expect(piece[StoredKeys.format(PieceKeys.mixStem.fd.name).name]?.stringValue == "wave")
        #expect(piece[StoredKeys.format(PieceKeys.preview.fd.name).name]?.stringValue == "flac")
        #expect(piece[StoredKeys.format(PieceKeys.coverImage.fd.name).name]?.stringValue == "png")
        #expect(piece[PieceKeys.attachmentMimeType.name]?.stringValue == "text/plain")
        #expect(piece[StoredKeys.size(PieceKeys.attachment.fd.name).name]?.uint64Value == 11)
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
            let dropped = try await pieces.client.subscribe(MatchRule(sender: PiecesFixture.busName, interface: PiecesFixture.interface,
                                                                      member: Pieces.pieceDropped.name))

            let byFD = try await pieces.drop(Self.everyField([
                PieceKeys.mixStem.fd.name: try PiecesFixture.fd(wav), PieceKeys.preview.fd.name: try PiecesFixture.fd(flac),
                PieceKeys.coverImage.fd.name: try PiecesFixture.fd(cover), PieceKeys.attachment.fd.name: try PiecesFixture.fd(attachment),
            ]))
            let byPath = try await pieces.drop(Self.everyField([
                PieceKeys.mixStem.path.name: .string(wav.path), PieceKeys.preview.path.name: .string(flac.path),
                PieceKeys.coverImage.path.name: .string(cover.path), PieceKeys.attachment.path.name: .string(attachment.path),
            ]))
            #expect(byFD != byPath)
            let signal = try #require(await dropped.next(timeout: .seconds(5)))
            #expect(signal.body.first?.stringValue == byFD)
            #expect(signal.body[1].stringKeyedValue?[PieceKeys.title.name]?.stringValue == "Riff in A 🎸")

            for id in [byFD, byPath] {
                checkEveryField(try await pieces.get(id), id: id)
                // The WAV mix stem comes back byte for byte.
                let stem = try readAll(try await pieces.call(Pieces.openMixStem, [.string(id), .string("wave")]).first)
                #expect(stem == wavBytes)
                let coverBytes = try readAll(try await pieces.call(Pieces.openCoverImage, [.string(id)]).first)
                #expect(coverBytes == Array(try Data(contentsOf: cover)))
                let preview = try readAll(try await pieces.call(Pieces.openPreview, [.string(id), .string("flac")]).first)
                #expect(preview == Array(try Data(contentsOf: flac)))
                let reply = try await pieces.call(Pieces.openAttachment, [.string(id)])
                #expect(try readAll(reply.first) == Array("hello notes".utf8))
                #expect(reply.last?.stringValue == "text/plain")
                let exported = pieces.file("export-\(id).txt")
                let mime = try await pieces.call(Pieces.exportAttachment, [.string(id), .string(exported.path)])
                #expect(mime.first?.stringValue == "text/plain")
                #expect(try Data(contentsOf: exported) == Data("hello notes".utf8))
            }
            // Identical content is stored once.
            let stored = try await pieces.storedObjects()
            #expect(stored.objects.count == 4)
            #expect(stored.objects.contains(TestMedia.sha256(wavBytes)))
            #expect(stored.staged.isEmpty)
            #expect(try await pieces.call(Pieces.get, [.string(byFD)]).isEmpty == false)
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
            let first = try await pieces.drop([PieceKeys.title.name: .string("First"), PieceKeys.mixStem.path.name: .string(wav.path)])
            let second = try await pieces.drop([PieceKeys.title.name: .string("Second"), PieceKeys.mixStem.path.name: .string(wav.path)])
            #expect(try !mapsFFmpeg(), "FFmpeg's libraries mapped by a drop")
            let pieceFirst = try await pieces.get(first)
            let pieceSecond = try await pieces.get(second)
            #expect(pieceFirst[StoredKeys.truePeakDbtp.name]?.doubleValue != nil)
            #expect(pieceSecond[StoredKeys.truePeakDbtp.name] == pieceFirst[StoredKeys.truePeakDbtp.name])
            #expect(pieceSecond[StoredKeys.loudnessLufs.name] == pieceFirst[StoredKeys.loudnessLufs.name])
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
            let first = try await pieces.drop([PieceKeys.title.name: .string("First"), PieceKeys.mixStem.path.name: .string(wav.path)])
            #expect(try mapsLibsndfile(), "libsndfile not mapped after a drop")
            // Quiet: no call for one trim interval (10 s) after one with calls.
            let deadline = ContinuousClock.now + .seconds(40)
            while try mapsLibsndfile(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(250)) }
            #expect(try !mapsLibsndfile(), "libsndfile still mapped 40 s after the last call")
            let second = try await pieces.drop([PieceKeys.title.name: .string("Second"), PieceKeys.mixStem.path.name: .string(wav.path)])
            #expect(try mapsLibsndfile())
            let pieceFirst = try await pieces.get(first)
            let pieceSecond = try await pieces.get(second)
            let loudness = StoredKeys.loudnessLufs.name
            #expect(pieceSecond[loudness] != nil && pieceSecond[loudness] == pieceFirst[loudness])
            #expect(pieceSecond[StoredKeys.sampleRate.name]?.uint32Value == 44100
                        && pieceSecond[StoredKeys.channels.name]?.uint32Value == 2)
        }
    }

    @Test(arguments: Backend.allCases) func everyTranscodeOpensWithTheRightDuration(backend: Backend) async throws {
        try await PiecesFixture.with(backend) { pieces in
            let wav = pieces.file("mix.wav")
            try Data(TestMedia.wav(seconds: 3, rate: 48000, channels: 2)).write(to: wav)
            let id = try await pieces.drop([PieceKeys.title.name: .string("Transcodes"), PieceKeys.mixStem.path.name: .string(wav.path)])
            let expected: [String: (container: String, codec: String)] = [
                "wave": ("wav", "pcm_s16le"), "flac": ("flac", "flac"), "oggVorbis": ("ogg", "vorbis"),
                "aacM4A": ("mov,mp4,m4a,3gp,3g2,mj2", "aac"),
            ]
            // FFmpeg's codec and container libraries are mapped at the first AAC export, not
            // before (a drop's analysis uses none of FFmpeg).
            func mapsCodecLibraries() throws -> Bool {
                try pieces.service.maps("libavcodec") || pieces.service.maps("libavformat")
            }
            #expect(try !mapsCodecLibraries(), "libavcodec mapped before any AAC export")
            for (format, want) in expected.sorted(by: { $0.key < $1.key }) {
                #expect(try mapsCodecLibraries() == (format > "aacM4A"), "before \(format)")
                let out = pieces.file("export.\(format)")
                _ = try await pieces.call(Pieces.exportMixStem, [.string(id), .string(format), .string(out.path)])
                let probe = try await TestMedia.probe(out)
                #expect(probe.container == want.container, "\(format)")
                #expect(probe.codec == want.codec, "\(format)")
                #expect(abs(probe.seconds - 3) <= 0.03, "\(format): \(probe.seconds) s")
                // A second request reuses the stored transcode.
                let again = pieces.file("again.\(format)")
                _ = try await pieces.call(Pieces.exportMixStem, [.string(id), .string(format), .string(again.path)])
                #expect(try Data(contentsOf: again) == Data(contentsOf: out), "\(format)")
            }
            let transcoded = pieces.service.logText.components(separatedBy: "transcoded to").count - 1
            #expect(transcoded == 3, "wave was dropped; flac, oggVorbis and aacM4A were made once each")
            // The preview falls back to the mix stem.
            let preview = try readAll(try await pieces.call(Pieces.openPreview, [.string(id), .string("wave")]).first)
            #expect(preview == Array(try Data(contentsOf: wav)))
            await expectDBusError("org.freedesktop.DBus.Error.InvalidArgs") {
                _ = try await pieces.call(Pieces.openMixStem, [.string(id), .string("mp3")])
            }
            await expectDBusError(EarshotErrorName.assetNotFound.name) { _ = try await pieces.call(Pieces.openCoverImage, [.string(id)]) }
            await expectDBusError(EarshotErrorName.pieceNotFound.name) { _ = try await pieces.call(Pieces.get, [.string("nope")]) }
        }
    }
}
