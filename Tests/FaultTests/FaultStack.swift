import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotMedia
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Glibc
import Testing

/// The keys and members the tests name, as the contract declares them.
typealias PassThruMembers = CaptureContract.PassThru
typealias Session = SessionContract.Manager

/// The services' names (a test's own client dies with the bus it was on: the stack's
/// services are called from whichever connection is alive).
enum Service {
    static let capture = CaptureContract.busName
    static let passThru = PassThruMembers.interface.name
}

extension DBusConnection {
    /// Earshot's services through EarshotClient on this connection; the piece store's
    /// calls may take two minutes (long drops on a slow disk).
    var earshot: Earshot { Earshot(connection: self) }
    var pieces: PiecesProxy { PiecesProxy(connection: self, timeout: .seconds(120)) }

    /// `Drop`, returning the new piece's id.
    func drop(_ piece: PieceDrop) async throws -> String { try await pieces.drop(piece) }

    /// The bytes of a piece's mix stem in `format`.
    func mixStem(_ id: String, format: PieceAudioFormat = .wave) async throws -> [UInt8] {
        try readAll(.unixFD(try await pieces.openMixStem(id, format: format)))
    }

    /// `Count` of the piece store.
    func pieceCount() async throws -> UInt32 { try await pieces.count() }

    /// The ids `List` gives for everything.
    func pieceIDs() async throws -> [String] {
        var everything = PieceQuery()
        everything.limit = 500
        return try await pieces.list(everything).pieces.map(\.id)
    }
}

/// Audio made for the tests.
enum TestAudio {
    /// A 16-bit PCM WAV: a sine of `frequency` Hz at half scale, or (with `noise`) white
    /// noise, which no lossless codec can shrink.
    static func wav(seconds: Double, rate: Int = 44100, channels: Int = 2, frequency: Double = 440, noise: Bool = false) -> [UInt8] {
        let frames = Int(seconds * Double(rate))
        var data = [UInt8]()
        data.reserveCapacity(frames * channels * 2)
        var state: UInt64 = 0x2545_F491_4F6C_DD1D &+ UInt64(frequency)
        for frame in 0..<frames {
            for _ in 0..<channels {
                let value: Int16
                if noise {
                    state ^= state << 13
                    state ^= state >> 7
                    state ^= state << 17
                    value = Int16(truncatingIfNeeded: state >> 20)
                } else {
                    value = Int16(sin(2 * Double.pi * frequency * Double(frame) / Double(rate)) * 16000)
                }
                data.append(UInt8(truncatingIfNeeded: value))
                data.append(UInt8(truncatingIfNeeded: value >> 8))
            }
        }
        return PCMWave.header(sampleRate: UInt32(rate), channels: UInt32(channels), bitsPerSample: 16,
                              dataBytes: UInt64(data.count)) + data
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        var hasher = SHA256Hasher()
        bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.finalize()
    }
}

/// A piece store's directory as the tests look at it.
struct StoreDirectory {
    let url: URL

    /// The names (hashes) of the files in `objects/`.
    var objects: Set<String> {
        let manager = FileManager.default
        let objects = url.appendingPathComponent("objects")
        var names: Set<String> = []
        for shard in (try? manager.contentsOfDirectory(atPath: objects.path)) ?? [] {
            for name in (try? manager.contentsOfDirectory(atPath: objects.appendingPathComponent(shard).path)) ?? [] {
                names.insert(name)
            }
        }
        return names
    }

    /// The files in `tmp/` (assets being staged).
    var staged: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: url.appendingPathComponent("tmp").path)) ?? []
    }

    /// The size of the largest file in `tmp/`.
    var largestStagedSize: Int {
        staged.compactMap { name in
            (try? FileManager.default.attributesOfItem(atPath: url.appendingPathComponent("tmp/" + name).path))?[.size] as? Int
        }.max() ?? 0
    }
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}

/// Waits for `process` to exit and checks it did with `status` within `limit`; returns
/// how long it took (nil when it did not exit).
@discardableResult
func expectExit(_ process: ServiceProcess, status: Int32, within limit: Duration, since start: ContinuousClock.Instant,
                sourceLocation: SourceLocation = #_sourceLocation) async -> Duration? {
    let code = await process.waitForExit(timeout: limit + .seconds(10))
    let took = start.duration(to: .now)
    #expect(code == status, "\(process.executable) exited with \(code.map(String.init) ?? "nothing"):\n\(process.logText.suffix(2000))",
            sourceLocation: sourceLocation)
    #expect(took < limit, "\(process.executable) took \(took) to exit", sourceLocation: sourceLocation)
    return code == nil ? nil : took
}

/// A pipe whose reading end a test hands to a service as an asset, writing into it at
/// its own pace from a thread of its own (a full pipe blocks the writer until the service
/// reads).
final class SlowSource: Sendable {
    let reader: UnixFD
    private let writer: Int32
    private let closed = Locked(false)
    private let queue = DispatchQueue(label: "earshot-fault-tests.slow-source")

    init() throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw HarnessError("pipe: \(String(cString: strerror(errno)))") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        reader = UnixFD(taking: fds[0])
        writer = fds[1]
    }

    deinit { closeWriter() }

    private func closeWriter() {
        let first = closed.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        if first { Glibc.close(writer) }
    }

    /// Writes `bytes` (in the background, after what was queued before).
    func write(_ bytes: [UInt8]) {
        let writer = self.writer
        queue.async {
            var offset = 0
            while offset < bytes.count {
                let count = bytes[offset...].withUnsafeBytes { Glibc.write(writer, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return }
                offset += count
            }
        }
    }

    /// Closes the writing end once everything queued is written: the reader sees the end.
    func finish() {
        queue.async { self.closeWriter() }
    }

    /// Waits until everything queued has been written (or failed).
    func flush() async {
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }
}
