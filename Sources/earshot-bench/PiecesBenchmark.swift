import ArgumentParser
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotMedia
import EarshotTestHarness
import Foundation
import Glibc
import PieceStore
import PiecesCore

/// `earshot-bench pieces`: Drop of a 10 MiB WAV next to `sha256sum` + `cp`, `List` over
/// 100 000 pieces, and transcoding next to the `ffmpeg` command.
struct PiecesBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pieces",
        abstract: "Measure earshot-pieces: Drop against sha256sum + cp, List over 100 000 pieces, transcoding against ffmpeg.",
        discussion: """
            Needs the release build of earshot-pieces next to this binary \
            (swift build -c release --product earshot-pieces), sha256sum, cp and ffmpeg. Starts a \
            private dbus-daemon and earshot-pieces with its store in the bus's temporary directory \
            (on the same file system as the peers' files). Then, in one run:

            1. Drop: --drops times, a 10 MiB 16-bit stereo 44.1 kHz WAV (59.4 s of sound, each run's \
            file a little different) is dropped through a file descriptor; the time is the round-trip \
            of Drop: streaming into the store while hashing (SHA-256), fsync and rename, decoding the \
            whole file and measuring EBU R128 loudness and true peak, the SQLite transaction. After each \
            drop, `sha256sum FILE` and then `cp FILE COPY` run once; their wall times are added. The \
            same file is also analysed in this process (libsndfile + libebur128, as the service does) \
            to show how much of a drop is the audio analysis. Goal: Drop ≤ 2× sha256sum + cp.

            2. List: the store is filled with --pieces pieces (bulk-inserted through the store library \
            before the service starts: random tempo 40–220 BPM, tonality, root, time signature, one \
            shared mix stem), then --lists List calls each ask for a random 20 BPM tempo range and a \
            tonality, 50 per page, sorted by creation. Goal: p50 under 10 ms.

            3. Transcoding: --transcodes times, a fresh 60 s 16-bit stereo 44.1 kHz WAV piece is \
            dropped and \(PiecesContract.Manager.exportMixStem.name) asks for oggVorbis, then aacM4A: the first request of each \
            format transcodes (timed as the round-trip, including the copy to the export path). After \
            each, `ffmpeg -i FILE -c:a libvorbis OUT.ogg` and `ffmpeg -i FILE -c:a aac OUT.m4a` run once. \
            Goal: ≤ 1.2× ffmpeg.
            """)

    @Option(help: "Measured drops of the 10 MiB WAV.")
    var drops = 10

    @Option(help: "Pieces in the store for the List phase (default 100 000; 1 000 000 with --database).")
    var pieces = 100_000

    /// Whether --pieces was given (its default differs with --database).
    var piecesGiven: Bool { CommandLine.arguments.contains { $0 == "--pieces" || $0.hasPrefix("--pieces=") } }

    @Option(help: "Measured List calls.")
    var lists = 1000

    @Option(help: "Measured transcodes of each format.")
    var transcodes = 3

    @Option(help: ArgumentHelp("Measure the shared catalogue instead: a postgresql://user@host:port/database URL (emptied by nobody: use a new database), or `local` for a throwaway server started here. Then: the 10 MiB drop on PostgreSQL next to SQLite, drop on one host → \(PiecesContract.Manager.pieceDropped.name) on another, drops per second from three hosts, and List over --pieces pieces (default then 1 000 000).", valueName: "url"))
    var database: String?

    @Option(help: "With --database: seconds of drops from three hosts at once.")
    var seconds = 10

    @Flag(help: "Print the results as JSON instead of tables.")
    var json = false

    func validate() throws {
        guard drops >= 1, pieces >= 1, lists >= 1, transcodes >= 1, seconds >= 1 else {
            throw ValidationError("--drops, --pieces, --lists and --transcodes must be at least 1")
        }
    }

    func run() async throws {
        if let database {
            let benchmark = SharedPiecesBenchmark(database: database, drops: drops, pieces: piecesGiven ? pieces : 1_000_000,
                                                  lists: lists, seconds: seconds)
            let results = try await runInterruptibly(interrupted: "the buses, the services and the temporary files are gone") {
                try await benchmark.run()
            }
            try results.print(json: json)
            return
        }
        let benchmark = PiecesBenchmark(drops: drops, pieces: pieces, lists: lists, transcodes: transcodes)
        let results = try await runInterruptibly(interrupted: "the bus, the service and the temporary files are gone") { try await benchmark.run() }
        try results.print(json: json)
    }
}

struct PiecesBenchmark: Sendable {
    let drops: Int
    let pieces: Int
    let lists: Int
    let transcodes: Int

    static let busName = PiecesContract.busName
    static let path = ObjectPath(declared: PiecesContract.managerPath)

    func run() async throws -> PiecesBenchmarkResults {
        let service = try builtService("earshot-pieces")
        for tool in ["/usr/bin/sha256sum", "/usr/bin/cp", "/usr/bin/ffmpeg"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw BenchmarkError("\(tool) is missing")
        }
        return try await withPrivateBus { bus in try await measure(service: service, bus: bus) }
    }

    private func measure(service path: String, bus: PrivateBus) async throws -> PiecesBenchmarkResults {
        let data = bus.directory.appendingPathComponent("store")
        progress("filling the store with \(pieces) pieces")
        let fill = try fillStore(data)
        progress("starting earshot-pieces --data-dir \(data.path)")
        let service = try await ServiceProcess(path, arguments: ["--data-dir", data.path], bus: bus, busName: Self.busName)
        let client = try await bus.connect()
        defer { client.close() }
        let store = Earshot(connection: client).pieces
        do {
            let list = try await Self.listTimes(store, lists: lists, over: pieces, seed: 11)
            let drop = try await dropTimes(store, bus: bus)
            let transcode = try await transcodeTimes(store, bus: bus)
            guard service.isRunning else { throw BenchmarkError("earshot-pieces exited during the run:\n\(service.logText)") }
            let memory = try? ProcessSample.take(service.pid)
            await service.shutdown()
            return PiecesBenchmarkResults(processors: ProcessInfo.processInfo.activeProcessorCount, storedPieces: pieces,
                                          fillSeconds: fill, drop: drop, list: Figures(list), transcode: transcode,
                                          serviceRssKiB: memory?.rssKiB)
        } catch {
            if !service.isRunning {
                progress("earshot-pieces exited; its log:\n\(service.logText.split(separator: "\n").suffix(20).joined(separator: "\n"))")
            }
            await service.shutdown()
            throw error
        }
    }

    // MARK: Files

    /// A 16-bit stereo 44.1 kHz WAV of `bytes` bytes of sound: two sines and a little noise,
    /// varied by `seed`.
    static func writeWAV(_ url: URL, dataBytes: Int, seed: Int) throws {
        let frames = dataBytes / 4
        var pcm = [UInt8](repeating: 0, count: frames * 4)
        var noise = UInt32(truncatingIfNeeded: seed &* 2_654_435_761 &+ 1)
        for frame in 0..<frames {
            noise = noise &* 1_664_525 &+ 1_013_904_223
            let t = Double(frame) / 44100
            let left = Int16(sin(2 * .pi * (220 + Double(seed)) * t) * 9000 + Double(Int32(noise >> 20) - 2048))
            let right = Int16(sin(2 * .pi * 330 * t) * 9000 + Double(Int32(noise >> 21) - 1024))
            pcm[frame * 4] = UInt8(truncatingIfNeeded: left)
            pcm[frame * 4 + 1] = UInt8(truncatingIfNeeded: left >> 8)
            pcm[frame * 4 + 2] = UInt8(truncatingIfNeeded: right)
            pcm[frame * 4 + 3] = UInt8(truncatingIfNeeded: right >> 8)
        }
        func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xff) } }
        let header = Array("RIFF".utf8) + le32(36 + pcm.count) + Array("WAVEfmt ".utf8) + le32(16) + [1, 0, 2, 0]
            + le32(44100) + le32(44100 * 4) + [4, 0, 16, 0] + Array("data".utf8) + le32(pcm.count)
        try Data(header + pcm).write(to: url)
    }

    // MARK: Phases

    private func fillStore(_ directory: URL) throws -> Double {
        let started = monotonicNanoseconds()
        let store = try PieceStore(directory: directory)
        let stem = directory.appendingPathComponent("seed.wav")
        try Self.writeWAV(stem, dataBytes: 44100 * 4, seed: 0)
        let fd = open(stem.path, O_RDONLY | O_CLOEXEC)
        let staged = try store.objects.stage(from: fd, limit: .max)
        close(fd)
        try store.objects.commit(staged)
        var generator = SeededGenerator(seed: 7)
        let base = Date(timeIntervalSince1970: 1_700_000_000)
        let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let major = [true, false, true, false, true, true, false, true, false, true, false, true]
        var batch: [StoredPiece] = []
        for index in 0..<pieces {
            var draft = PieceDraft(title: "Piece \(index)", lengthMicroseconds: 1_000_000,
                                   tempo: 40 + Double(generator.next() % 180_000) / 1000)
            draft.timeSignature = try TimeSignature(upper: UInt8(2 + generator.next() % 6), lower: 4)
            switch generator.next() % 3 {
            case 0: draft.tonality = .unknown
            case 1: draft.tonality = .atonal
            default:
                let root = [0, 2, 4, 5, 7, 9, 11][Int(generator.next() % 7)]
                draft.tonality = .tonal(scale: major, root: UInt8(root))
            }
            let created = base.addingTimeInterval(Double(index)).formatted(format)
            batch.append(StoredPiece(id: UUID().uuidString.lowercased(), draft: draft, createdAt: created, author: "bench", authorUID: getuid(),
                                     facts: MixStemFacts(sampleRate: 44100, channels: 2, loudnessLufs: -14, truePeakDbtp: -1),
                                     assets: [StoredAsset(kind: .mixStem, format: "wave", hash: staged.hash, size: staged.size, dropped: true)]))
            if batch.count == 5000 {
                try store.insertAll(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        try store.insertAll(batch)
        return Double(monotonicNanoseconds() - started) / 1e9
    }

    /// `lists` List calls (after 50 unmeasured ones), each a random 20 BPM tempo range and
    /// a tonality, 50 per page; their round trips in ms.
    static func listTimes(_ store: PiecesProxy, lists: Int, over pieces: Int, seed: UInt64) async throws -> [Double] {
        var generator = SeededGenerator(seed: seed)
        var times: [Double] = []
        progress("\(lists) List calls over \(pieces) pieces")
        for index in 0..<(lists + 50) {
            let low = 40 + Double(generator.next() % 160)
            // EarshotClient's query (PiecesCore has a PieceQuery of its own).
            var query = EarshotClient.PieceQuery()
            query.tempoMin = low
            query.tempoMax = low + 20
            query.tonality = [PieceTonality.unknown, .atonal, .tonal][Int(generator.next() % 3)]
            query.limit = 50
            let start = monotonicNanoseconds()
            _ = try await store.list(query)
            if index >= 50 { times.append(Double(monotonicNanoseconds() - start) / 1e6) }
        }
        return times
    }

    private func dropTimes(_ store: PiecesProxy, bus: PrivateBus) async throws -> DropResult {
        var drop: [Double] = [], peer: [Double] = [], analysis: [Double] = []
        progress("\(drops) drops of a 10 MiB WAV, each followed by sha256sum and cp")
        for run in 0...drops {
            let file = bus.directory.appendingPathComponent("drop-\(run).wav")
            try Self.writeWAV(file, dataBytes: 10 * 1024 * 1024 - 44, seed: run + 1)
            let fd = open(file.path, O_RDONLY | O_CLOEXEC)
            let start = monotonicNanoseconds()
            _ = try await store.drop(PieceDrop(title: "Drop \(run)", mixStem: .descriptor(UnixFD(taking: fd))))
            let dropped = Double(monotonicNanoseconds() - start) / 1e6
            let hash = try await TimedCommand.run(["/usr/bin/sha256sum", file.path])
            let copy = try await TimedCommand.run(["/usr/bin/cp", file.path, file.path + ".copy"])
            let analysisStart = monotonicNanoseconds()
            _ = try AudioAnalyzer.analyze(path: file.path)
            let analysed = Double(monotonicNanoseconds() - analysisStart) / 1e6
            unlink(file.path + ".copy")
            unlink(file.path)
            guard run > 0 else { continue }  // the first is a warm-up
            drop.append(dropped)
            peer.append(Double(hash.nanoseconds + copy.nanoseconds) / 1e6)
            analysis.append(analysed)
        }
        return DropResult(drop: Figures(drop), sha256sumPlusCp: Figures(peer), analysisInProcess: Figures(analysis))
    }

    private func transcodeTimes(_ store: PiecesProxy, bus: PrivateBus) async throws -> TranscodeResult {
        var ours: [String: [Double]] = [:], ffmpeg: [String: [Double]] = [:]
        let commands: [PieceAudioFormat: (String, [String])] = [.oggVorbis: ("ogg", ["-c:a", "libvorbis"]), .aacM4A: ("m4a", ["-c:a", "aac"])]
        progress("\(transcodes) transcodes of a 60 s WAV to Ogg Vorbis and AAC, each next to the ffmpeg command")
        for run in 0..<transcodes {
            let file = bus.directory.appendingPathComponent("minute-\(run).wav")
            try Self.writeWAV(file, dataBytes: 44100 * 4 * 60, seed: 100 + run)
            let id = try await store.drop(PieceDrop(title: "Minute \(run)", mixStemPath: file.path))
            // Ogg Vorbis first, then AAC (the formats' names in descending order, as before).
            for (format, (ext, codec)) in commands.sorted(by: { $0.key.rawValue > $1.key.rawValue }) {
                let out = bus.directory.appendingPathComponent("export-\(run).\(ext)").path
                let start = monotonicNanoseconds()
                try await store.exportMixStem(id, format: format, to: out)
                ours[format.rawValue, default: []].append(Double(monotonicNanoseconds() - start) / 1e6)
                let peerOut = bus.directory.appendingPathComponent("ffmpeg-\(run).\(ext)").path
                let outcome = try await TimedCommand.run(["/usr/bin/ffmpeg", "-nostdin", "-v", "error", "-y", "-i", file.path] + codec + [peerOut])
                guard outcome.status == 0 else { throw BenchmarkError("ffmpeg exited with \(outcome.status)") }
                ffmpeg[format.rawValue, default: []].append(Double(outcome.nanoseconds) / 1e6)
                unlink(out)
                unlink(peerOut)
            }
            unlink(file.path)
        }
        let ogg = PieceAudioFormat.oggVorbis.rawValue, aac = PieceAudioFormat.aacM4A.rawValue
        return TranscodeResult(oggVorbis: Figures(ours[ogg] ?? []), ffmpegOggVorbis: Figures(ffmpeg[ogg] ?? []),
                               aacM4A: Figures(ours[aac] ?? []), ffmpegAacM4A: Figures(ffmpeg[aac] ?? []))
    }
}

struct DropResult: Encodable, Sendable {
    let drop: Figures
    let sha256sumPlusCp: Figures
    let analysisInProcess: Figures
}

struct TranscodeResult: Encodable, Sendable {
    let oggVorbis: Figures
    let ffmpegOggVorbis: Figures
    let aacM4A: Figures
    let ffmpegAacM4A: Figures
}

struct PiecesBenchmarkResults: BenchmarkReport, Sendable {
    let processors: Int
    let storedPieces: Int
    let fillSeconds: Double
    let drop: DropResult
    let list: Figures
    let transcode: TranscodeResult
    let serviceRssKiB: UInt64?

    func table() -> String {
        let widths = [-34, 8, 10, 10, 10, 10]
        func row(_ name: String, _ figures: Figures) -> String {
            TableFormat.row([name, String(figures.samples), TableFormat.fixed(figures.p50, 2), TableFormat.fixed(figures.p99, 2),
                             TableFormat.fixed(figures.mean, 2), TableFormat.fixed(figures.max, 2)], widths: widths)
        }
        var lines: [String] = []
        lines.append("earshot-pieces on a private bus, \(processors) processors (milliseconds)")
        lines.append(TableFormat.row(["", "samples", "p50", "p99", "mean", "max"], widths: widths))
        lines.append(row("Drop 10 MiB WAV (fd)", drop.drop))
        lines.append(row("  sha256sum + cp, same file", drop.sha256sumPlusCp))
        lines.append(row("  analysis alone (in process)", drop.analysisInProcess))
        lines.append(row("List, tempo range + tonality, 50", list))
        lines.append(row("Export → Ogg Vorbis, 60 s (first)", transcode.oggVorbis))
        lines.append(row("  ffmpeg -c:a libvorbis", transcode.ffmpegOggVorbis))
        lines.append(row("Export → AAC/M4A, 60 s (first)", transcode.aacM4A))
        lines.append(row("  ffmpeg -c:a aac", transcode.ffmpegAacM4A))
        let dropRatio = drop.drop.p50 / drop.sha256sumPlusCp.p50
        let oggRatio = transcode.oggVorbis.p50 / transcode.ffmpegOggVorbis.p50
        let aacRatio = transcode.aacM4A.p50 / transcode.ffmpegAacM4A.p50
        lines.append("store: \(storedPieces) pieces (bulk fill \(TableFormat.fixed(fillSeconds, 1)) s)")
        lines.append("goals: Drop ≤ 2× sha256sum + cp: \(TableFormat.fixed(dropRatio, 2))× \(dropRatio <= 2 ? "met" : "NOT met"); "
            + "List p50 < 10 ms: \(TableFormat.fixed(list.p50, 2)) ms \(list.p50 < 10 ? "met" : "NOT met"); "
            + "transcoding ≤ 1.2× ffmpeg: Ogg \(TableFormat.fixed(oggRatio, 2))× \(oggRatio <= 1.2 ? "met" : "NOT met"), "
            + "AAC \(TableFormat.fixed(aacRatio, 2))× \(aacRatio <= 1.2 ? "met" : "NOT met")")
        if let serviceRssKiB { lines.append("earshot-pieces RSS after the run: \(serviceRssKiB) KiB") }
        return lines.joined(separator: "\n")
    }
}
