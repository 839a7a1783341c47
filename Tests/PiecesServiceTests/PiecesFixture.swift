import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotMedia
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Glibc
import Testing

/// Where the service under test keeps its catalogue.
enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
    /// The private store: SQLite and files under the data directory.
    case sqlite
    /// The shared catalogue: a database of its own on the test process's PostgreSQL server.
    case postgres

    var description: String { rawValue }
}

/// The store's interface and the keys of its requests and results, as the contract declares them.
typealias Pieces = PiecesContract.Manager
typealias PieceKeys = PiecesContract.Manager.PieceKeys
typealias StoredKeys = PiecesContract.Manager.StoredKeys
typealias QueryKeys = PiecesContract.Manager.QueryKeys

/// A private bus and the real earshot-pieces keeping its store in the bus directory, or
/// its catalogue in a new PostgreSQL database, spoken to through EarshotClient.
struct PiecesFixture {
    static let busName = PiecesContract.busName
    static let path = ObjectPath(declared: PiecesContract.managerPath)
    static let interface = Pieces.interface.name

    let bus: PrivateBus
    let service: ServiceProcess
    let client: DBusConnection
    let arguments: [String]
    /// The shared catalogue's server and database, on `.postgres`.
    let database: (server: PostgresTestServer, name: String)?

    static func with<T>(_ backend: Backend = .sqlite, _ body: (PiecesFixture) async throws -> T) async throws -> T {
        var database: (server: PostgresTestServer, name: String)?
        var arguments: [String] = []
        let credentials = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-host-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: credentials) }
        if backend == .postgres {
            let server = try await PostgresTestServer.sharedServer()
            let url = try await server.createDatabase()
            database = (server, String(url.split(separator: "/").last!))
            try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
            let (hostURL, passwordFile) = try await server.addHost(PostgresTestServer.hostName("host-a"), catalogue: url, directory: credentials)
            arguments = ["--database", hostURL, "--database-password-file", passwordFile.path]
        }
        return try await ServiceSession.with("earshot-pieces", arguments: arguments, busName: busName, prepare: { bus in
            ["XDG_DATA_HOME": bus.directory.path]
        }) { session in
            try await body(PiecesFixture(bus: session.bus, service: session.service, client: session.client,
                                         arguments: arguments, database: database))
        }
    }

    var dataDirectory: URL { bus.directory.appendingPathComponent("earshot/pieces") }
    func file(_ name: String) -> URL { bus.directory.appendingPathComponent(name) }

    /// Starts the service again on the same bus and store (after it was killed).
    func restart() async throws -> ServiceProcess {
        try await ServiceProcess("earshot-pieces", arguments: ["--data-dir", dataDirectory.path] + arguments, bus: bus, busName: Self.busName)
    }

    /// The store through EarshotClient, on the fixture's connection or `connection`, its
    /// calls given two minutes (the machine may be busy).
    var pieces: PiecesProxy { pieces(on: nil) }
    func pieces(on connection: DBusConnection?) -> PiecesProxy { PiecesProxy(connection: connection ?? client, timeout: .seconds(120)) }

    @discardableResult
    func drop(_ piece: PieceDrop, on connection: DBusConnection? = nil) async throws -> String { try await pieces(on: connection).drop(piece) }
    func get(_ id: String) async throws -> Piece { try await pieces.get(id) }
    func delete(_ id: String) async throws { try await pieces.delete(id) }

    /// The ids of the page `query` (or the one `configure` sets) matches, and how many match in all.
    func list(_ query: PieceQuery = PieceQuery()) async throws -> (ids: [String], total: UInt32) {
        let (page, total) = try await pieces.list(query)
        return (page.map(\.id), total)
    }
    func list(_ configure: (inout PieceQuery) -> Void) async throws -> (ids: [String], total: UInt32) {
        var query = PieceQuery()
        configure(&query)
        return try await list(query)
    }

    /// The mix stem in `format`, read to its end.
    func mixStem(_ id: String, _ format: PieceAudioFormat = .wave) async throws -> [UInt8] {
        try readAll(try await pieces.openMixStem(id, format: format))
    }

    /// Drops and deletions from now on, as EarshotClient reads them, taken with time limits.
    func changes() async throws -> Arrivals<PieceChange> { Arrivals(try await pieces.changes()) }

    // Requests the client refuses to send or cannot spell (wrong types, unknown keys, values
    // out of range, an asset by both keys or by none), sent raw: what the service says to them.
    func drop(raw piece: [String: DBusValue]) async throws { _ = try await call(raw: Pieces.drop, [.vardict(piece)]) }
    func list(raw query: [String: DBusValue]) async throws -> [DBusValue] { try await call(raw: Pieces.list, [.vardict(query)]) }
    func call(raw method: MethodDeclaration, _ arguments: [DBusValue]) async throws -> [DBusValue] {
        try await client.call(destination: Self.busName, path: Self.path, interface: Self.interface, member: method.name, arguments,
                              timeout: .seconds(120))
    }

    /// A descriptor open for reading `url`.
    static func fd(_ url: URL) throws -> UnixFD {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HarnessError("cannot open \(url.path)") }
        return UnixFD(taking: fd)
    }

    /// The major scale, C to B.
    static let major = [true, false, true, false, true, true, false, true, false, true, false, true]

    /// The objects the store keeps, by name (their hashes), and the files in its staging
    /// directory (a shared catalogue's is in its cache directory).
    func storedObjects() async throws -> (objects: Set<String>, staged: [String]) {
        let manager = FileManager.default
        let files = database == nil ? dataDirectory : dataDirectory.appendingPathComponent("shared-cache")
        let staged = (try? manager.contentsOfDirectory(atPath: files.appendingPathComponent("tmp").path)) ?? []
        if let database {
            let hashes = try await database.server.psql("SELECT hash FROM object", database: database.name)
            return (Set(hashes.split(separator: "\n").map(String.init)), staged)
        }
        let objects = dataDirectory.appendingPathComponent("objects")
        var names: Set<String> = []
        for shard in (try? manager.contentsOfDirectory(atPath: objects.path)) ?? [] {
            for name in (try? manager.contentsOfDirectory(atPath: objects.appendingPathComponent(shard).path)) ?? [] {
                names.insert(name)
            }
        }
        return (names, staged)
    }
}

extension PieceDrop {
    /// A piece of `title` whose mix stem is the file at `stem`, with the fields `configure` sets.
    static func titled(_ title: String, stem: URL, _ configure: (inout PieceDrop) -> Void = { _ in }) -> PieceDrop {
        var piece = PieceDrop(title: title, mixStemPath: stem.path)
        configure(&piece)
        return piece
    }
}

extension PieceChange {
    /// The piece dropped and its summary, or the piece deleted; nil for another change.
    var dropped: (id: String, summary: [String: DBusValue])? { if case .dropped(let id, let summary) = self { (id, summary) } else { nil } }
    var deleted: String? { if case .deleted(let id) = self { id } else { nil } }

    /// The signal's name and the piece's id, e.g. `PieceDropped 1f…`.
    var text: String {
        dropped.map { "\(Pieces.pieceDropped.name) \($0.id)" } ?? deleted.map { "\(Pieces.pieceDeleted.name) \($0)" } ?? Pieces.changesMissed.name
    }
}

extension Arrivals<PieceChange> {
    /// The next change that `matches` within `limit`, passing over the others.
    func next(within limit: Duration = .seconds(1), where matches: (PieceChange) -> Bool) async -> PieceChange? {
        let deadline = ContinuousClock.now + limit
        while let change = await next(within: deadline - .now) {
            if matches(change) { return change }
        }
        return nil
    }
}

/// Test audio and images, made here.
enum TestMedia {
    /// A 16-bit PCM WAV of a sine (`frequency` Hz at half scale).
    static func wav(seconds: Double, rate: Int = 44100, channels: Int = 1, frequency: Double = 440) -> [UInt8] {
        let frames = Int(seconds * Double(rate))
        var data = [UInt8]()
        data.reserveCapacity(frames * channels * 2)
        for frame in 0..<frames {
            let value = Int16(sin(2 * Double.pi * frequency * Double(frame) / Double(rate)) * 16000)
            for _ in 0..<channels {
                data.append(UInt8(truncatingIfNeeded: value))
                data.append(UInt8(truncatingIfNeeded: value >> 8))
            }
        }
        return header(dataBytes: data.count, rate: rate, channels: channels, bits: 16) + data
    }

    /// An 8-bit 8 kHz mono WAV of `frames` frames of silence (small files for long pieces).
    static func longWav(frames: Int) -> [UInt8] {
        header(dataBytes: frames, rate: 8000, channels: 1, bits: 8) + [UInt8](repeating: 128, count: frames)
    }

    static func header(dataBytes: Int, rate: Int, channels: Int, bits: Int) -> [UInt8] {
        func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xff) } }
        func le16(_ v: Int) -> [UInt8] { (0..<2).map { UInt8((v >> (8 * $0)) & 0xff) } }
        let blockAlign = channels * bits / 8
        return Array("RIFF".utf8) + le32(36 + dataBytes) + Array("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(channels)
            + le32(rate) + le32(rate * blockAlign) + le16(blockAlign) + le16(bits) + Array("data".utf8) + le32(dataBytes)
    }

    /// An image made by ffmpeg: a solid colour of `width`×`height` in PNG or JPEG.
    static func image(_ url: URL, width: Int, height: Int) async throws {
        _ = try await ToolRun.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=teal:s=\(width)x\(height)",
                                   "-frames:v", "1", url.path])
    }

    /// A file converted by ffmpeg (e.g. WAV to FLAC by the output's extension).
    static func convert(_ input: URL, to output: URL) async throws {
        _ = try await ToolRun.run(["ffmpeg", "-v", "error", "-y", "-i", input.path, output.path])
    }

    /// What ffprobe says of a file: container, codec, duration in seconds.
    static func probe(_ url: URL) async throws -> (container: String, codec: String, seconds: Double) {
        let json = try await ToolRun.run(["ffprobe", "-v", "error", "-show_entries", "format=format_name,duration:stream=codec_name",
                                          "-of", "json", url.path])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let format = try #require(object["format"] as? [String: Any])
        let streams = try #require(object["streams"] as? [[String: Any]])
        return (format["format_name"] as? String ?? "", streams.first?["codec_name"] as? String ?? "",
                Double(format["duration"] as? String ?? "") ?? -1)
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        var hasher = SHA256Hasher()
        bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }
}
