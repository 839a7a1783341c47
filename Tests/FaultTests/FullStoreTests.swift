import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Glibc
import Testing

/// The piece store's disk fills up. What does not fit is refused with
/// `org.earshot.Error.NoSpace` and leaves nothing behind (no staged file, no object, no
/// row); what was stored reads back intact; deleting makes room again. The store keeps
/// 1 MiB free for its database, so that deletions still work once drops have filled it.
///
/// The store lives on a tmpfs of its own (mounting needs root); the last test limits the
/// file size of the service instead (RLIMIT_FSIZE), which needs nothing.
@Suite struct FullStoreTests {
    /// Pieces known to be stored, and their mix stems.
    struct Stored {
        var pieces: [(id: String, stem: [UInt8])] = []
        var hashes: Set<String> { Set(pieces.map { TestAudio.sha256($0.stem) }) }
    }

    /// The store holds exactly `stored`: `Count`, `List`, every mix stem byte for byte, the
    /// object files, and nothing staged.
    func expectHolds(_ stored: Stored, _ store: StoreDirectory, _ client: DBusConnection,
                     sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(try await client.pieceCount() == UInt32(stored.pieces.count), sourceLocation: sourceLocation)
        #expect(Set(try await client.pieceIDs()) == Set(stored.pieces.map(\.id)), sourceLocation: sourceLocation)
        for piece in stored.pieces {
            #expect(try await client.mixStem(piece.id) == piece.stem, "piece \(piece.id)", sourceLocation: sourceLocation)
        }
        #expect(store.objects == stored.hashes, sourceLocation: sourceLocation)
        #expect(store.staged.isEmpty, "staged: \(store.staged)", sourceLocation: sourceLocation)
    }

    /// Starts earshot-pieces keeping its store on `disk`.
    func launchStore(on disk: SmallDisk, in stack: ServiceStack) async throws -> (ServiceProcess, StoreDirectory) {
        let data = disk.directory.appendingPathComponent("pieces")
        let service = try await stack.launch("earshot-pieces", arguments: ["--data-dir", data.path])
        return (service, StoreDirectory(url: data))
    }

    /// Writes `stem` next to the bus (not on the small disk) for a `MixStemPath`.
    func stemFile(_ stem: [UInt8], _ name: String, in stack: ServiceStack) throws -> String {
        let url = stack.file(name + ".wav")
        try Data(stem).write(to: url)
        return url.path
    }

    @Test(.enabled(if: SmallDisk.canMount, "mounting a tmpfs needs root"))
    func dropsUntilOneDoesNotFitThenDeletingMakesRoom() async throws {
        let disk = try SmallDisk.mount(bytes: 6 << 20)
        defer { disk.release() }
        try await ServiceStack.with([]) { stack in
            let (service, store) = try await launchStore(on: disk, in: stack)
            let client = stack.client
            var stored = Stored()
            var refusal: (error: EarshotError, stem: [UInt8])?
            for index in 0..<20 {
                let stem = TestAudio.wav(seconds: 3, frequency: 200 + Double(index) * 25)  // 529 KB each
                do {
                    let id = try await client.drop(PieceDrop(title: "Piece \(index)", mixStemPath: try stemFile(stem, "stem-\(index)", in: stack)))
                    stored.pieces.append((id, stem))
                } catch let error as EarshotError {
                    refusal = (error, stem)
                    break
                }
            }
            let refused = try #require(refusal, "20 pieces fitted in 6 MiB")
            #expect(refused.error.name == EarshotErrorName.noSpace.name, "\(refused.error)")
            #expect(refused.error.message.contains("out of space"), "\(refused.error)")
            #expect(stored.pieces.count >= 5)
            try await expectHolds(stored, store, client)

            // Larger than what is free: the write itself fails (ENOSPC), refused alike.
            let large = TestAudio.wav(seconds: 15, frequency: 100)
            let error = await expectDBusError(EarshotErrorName.noSpace.name) {
                _ = try await client.drop(PieceDrop(title: "Too large", mixStemPath: try stemFile(large, "large", in: stack)))
            }
            #expect(error?.message.contains(String(cString: strerror(ENOSPC))) == true, "\(String(describing: error))")
            try await expectHolds(stored, store, client)

            // Deleting a piece makes room: the refused one fits now.
            try await client.pieces.delete(stored.pieces[0].id)
            stored.pieces.removeFirst()
            let id = try await client.drop(PieceDrop(title: "Fits now", mixStemPath: try stemFile(refused.stem, "refused", in: stack)))
            stored.pieces.append((id, refused.stem))
            try await expectHolds(stored, store, client)
            #expect(service.isRunning)
            await service.shutdown()
        }
    }

    @Test(.enabled(if: SmallDisk.canMount, "mounting a tmpfs needs root"))
    func theDatabaseOnAFullDisk() async throws {
        let disk = try SmallDisk.mount(bytes: 4 << 20)
        defer { disk.release() }
        try await ServiceStack.with([]) { stack in
            let (service, store) = try await launchStore(on: disk, in: stack)
            let client = stack.client
            var stored = Stored()
            for index in 0..<2 {
                let stem = TestAudio.wav(seconds: 1, frequency: 600 + Double(index) * 50)
                let id = try await client.drop(PieceDrop(title: "Kept \(index)", mixStemPath: try stemFile(stem, "kept-\(index)", in: stack)))
                stored.pieces.append((id, stem))
            }
            // Something else takes the last byte: even SQLite's log cannot grow.
            let filler = try disk.fill("filler")
            let refused = await expectDBusError(EarshotErrorName.noSpace.name) {
                try await client.pieces.delete(stored.pieces[0].id)
            }
            #expect(refused?.message.contains("database") == true, "\(String(describing: refused))")
            let tiny = TestAudio.wav(seconds: 0.1, frequency: 880)
            await expectDBusError(EarshotErrorName.noSpace.name) {
                _ = try await client.drop(PieceDrop(title: "No room", mixStemPath: try stemFile(tiny, "tiny", in: stack)))
            }
            // The rolled-back deletion changed nothing.
            try await expectHolds(stored, store, client)

            // Room again: the same deletion goes through.
            unlink(filler.path)
            try await client.pieces.delete(stored.pieces[0].id)
            stored.pieces.removeFirst()
            try await expectHolds(stored, store, client)
            #expect(service.isRunning)
            await service.shutdown()
        }
    }

    @Test(.enabled(if: SmallDisk.canMount, "mounting a tmpfs needs root"))
    func transcodesThatDoNotFitLeaveNothing() async throws {
        let disk = try SmallDisk.mount(bytes: 8 << 20)
        defer { disk.release() }
        try await ServiceStack.with([]) { stack in
            let (service, store) = try await launchStore(on: disk, in: stack)
            let client = stack.client
            // Noise: FLAC cannot shrink it, so its FLAC is as large as the WAV (2.6 MB).
            let stem = TestAudio.wav(seconds: 15, noise: true)
            let id = try await client.drop(PieceDrop(title: "Noise", mixStemPath: try stemFile(stem, "noise", in: stack)))
            let stored = Stored(pieces: [(id, stem)])

            // 1.5 MiB free: no room for the FLAC.
            let filler = try disk.fill("filler", leaving: (3 << 20) / 2)
            let flac = await expectDBusError(EarshotErrorName.noSpace.name) {
                _ = try await client.mixStem(id, format: .flac)
            }
            #expect(flac?.message.contains("out of space") == true, "\(String(describing: flac))")
            try await expectHolds(stored, store, client)

            // The same through a path.
            let exported = stack.file("noise.flac")
            await expectDBusError(EarshotErrorName.noSpace.name) {
                try await client.pieces.exportMixStem(id, format: .flac, to: exported.path)
            }
            #expect(!FileManager.default.fileExists(atPath: exported.path))
            try await expectHolds(stored, store, client)

            // A transcode that fits (AAC: about 250 KB) is made and kept.
            let aac = try await client.mixStem(id, format: .aacM4A)
            #expect(Array(aac.dropFirst(4).prefix(4)) == Array("ftyp".utf8))
            #expect(store.objects == stored.hashes.union([TestAudio.sha256(aac)]))

            // Room again: the FLAC is made.
            unlink(filler.path)
            let made = try await client.mixStem(id, format: .flac)
            #expect(Array(made.prefix(4)) == Array("fLaC".utf8))
            #expect(store.objects == stored.hashes.union([TestAudio.sha256(aac), TestAudio.sha256(made)]))
            #expect(store.staged.isEmpty)
            #expect(service.isRunning)
            await service.shutdown()
        }
    }

    /// Without a disk of its own: a file-size limit on the service (`prlimit --fsize`).
    /// SIGXFSZ is ignored, so a write past the limit fails with EFBIG, refused like a full
    /// disk, and the service lives on.
    @Test func aFileSizeLimitIsRefusedLikeAFullDisk() async throws {
        try await ServiceStack.with([]) { stack in
            let data = stack.file("limited-pieces")
            let executable = ServiceProcess.productsDirectory.appendingPathComponent("earshot-pieces").path
            let service = try await ServiceProcess("/usr/bin/prlimit", arguments: ["--fsize=\(1 << 20)", executable, "--data-dir", data.path],
                                                   bus: stack.bus, busName: PiecesContract.busName)
            defer { service.stop() }
            let store = StoreDirectory(url: data)
            let client = stack.client
            let large = TestAudio.wav(seconds: 12, frequency: 150)  // 2.1 MB, past the limit
            let error = await expectDBusError(EarshotErrorName.noSpace.name) {
                _ = try await client.drop(PieceDrop(title: "Past the limit", mixStemPath: try stemFile(large, "limited-large", in: stack)))
            }
            #expect(error?.message.contains(String(cString: strerror(EFBIG))) == true, "\(String(describing: error))")
            #expect(service.isRunning, "\(service.logText.suffix(1000))")
            try await expectHolds(Stored(), store, client)

            let small = TestAudio.wav(seconds: 2, frequency: 700)  // 353 KB
            let id = try await client.drop(PieceDrop(title: "Within the limit", mixStemPath: try stemFile(small, "limited-small", in: stack)))
            try await expectHolds(Stored(pieces: [(id, small)]), store, client)
            await service.shutdown()
        }
    }
}
