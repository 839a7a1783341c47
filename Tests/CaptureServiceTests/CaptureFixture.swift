import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Synchronization
import Testing

/// The capture service's declarations, as the contract spells them.
typealias CaptureManager = CaptureContract.Manager
typealias RequestKeys = CaptureContract.Manager.Keys
typealias PassThruMembers = CaptureContract.PassThru

/// A private bus, a file-backed ALSA microphone `mic` and the real earshot-capture.
struct CaptureFixture {
    static let busName = CaptureContract.busName
    static let path = ObjectPath(declared: CaptureContract.managerPath)
    /// The manager's interface (at `path`) and each pass-thru's.
    static let manager = CaptureManager.interface.name
    static let passThru = PassThruMembers.interface.name

    let bus: PrivateBus
    let service: ServiceProcess
    let client: DBusConnection
    let input: URL

    /// `input` is what the microphone will deliver; `pace` is the service's --pace.
    static func with<T>(input bytes: [UInt8], channels: Int? = nil, pace: String = "device", environment: [String: String] = [:],
                        _ body: (CaptureFixture) async throws -> T) async throws -> T {
        try await ServiceSession.with("earshot-capture", arguments: ["--device", "mic", "--pace", pace, "--linger-seconds", "5"],
                                      busName: busName, prepare: { bus in
            try Data(bytes).write(to: Self.input(of: bus))
            var devices = ALSATestDevices(configPath: bus.directory.appendingPathComponent("asound.conf"))
            devices.microphone("mic", infile: Self.input(of: bus), channels: channels)
            try devices.write()
            return devices.environment.merging(environment) { $1 }
        }) { session in
            try await body(CaptureFixture(bus: session.bus, service: session.service, client: session.client,
                                          input: Self.input(of: session.bus)))
        }
    }

    /// The file the microphone plays.
    static func input(of bus: PrivateBus) -> URL {
        bus.directory.appendingPathComponent("microphone.raw")
    }

    /// The capture service through EarshotClient, on the fixture's connection or `connection`.
    var capture: CaptureProxy { CaptureProxy(connection: client) }
    func capture(on connection: DBusConnection?) -> CaptureProxy { CaptureProxy(connection: connection ?? client) }

    /// A PCM request of `maxMs`, with what `configure` sets.
    static func request(rate: UInt32 = 16000, bits: UInt32 = 16, maxMs: UInt32 = 1000,
                        _ configure: (inout AudioPassThruRequest) -> Void = { _ in }) -> AudioPassThruRequest {
        var request = AudioPassThruRequest(samplingRate: rate, bitsPerSample: bits, maxDurationMs: maxMs)
        configure(&request)
        return request
    }

    /// The wire form of a PCM request of `maxMs` with `extra` keys: for requests the client
    /// refuses to send or cannot spell (wrong types, SDL's rate names, values out of range).
    static func rawRequest(maxMs: UInt32 = 1000, _ extra: [String: DBusValue] = [:]) -> [String: DBusValue] {
        var request: [String: DBusValue] = [
            RequestKeys.samplingRate.name: .uint32(16000), RequestKeys.bitsPerSample.name: .uint32(16),
            RequestKeys.audioType.name: .string("PCM"), RequestKeys.maxDuration.name: .uint32(maxMs),
        ]
        request.merge(extra) { _, new in new }
        return request
    }

    /// Starts a pass-thru from `connection` (the fixture's by default) without following it.
    func start(_ request: AudioPassThruRequest, on connection: DBusConnection? = nil) async throws -> PassThruControl {
        try await capture(on: connection).start(request)
    }

    /// `PerformAudioPassThru` with a request the client refuses to send, sent raw.
    @discardableResult
    func start(raw request: [String: DBusValue]) async throws -> ObjectPath {
        let reply = try await client.call(destination: Self.busName, path: Self.path, interface: Self.manager,
                                          member: CaptureManager.performAudioPassThru.name, [.vardict(request)])
        return try #require(reply.first?.objectPathValue)
    }

    /// Everything a pass-thru sent its owner, and how it ended, as EarshotClient reads it
    /// (so these tests also prove the client's reading).
    struct Recording {
        var chunks: [AudioChunk] = []
        var result: PassThruResult
        var bytes: [UInt8] { chunks.flatMap(\.data) }
    }

    /// Subscribes to the pass-thru signals a client sees (unicast chunks, broadcast Finished):
    /// for a watcher that is not the owner.
    static func subscribe(_ connection: DBusConnection) async throws -> SignalSubscription {
        try await connection.subscribe(MatchRule(sender: busName, interface: passThru))
    }

    /// Collects `path`'s chunks until its `Finished`, as a watcher that is not the owner.
    static func collect(_ subscription: SignalSubscription, path: ObjectPath, timeout: Duration = .seconds(30)) async throws -> Recording {
        var chunks: [AudioChunk] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let signal = await subscription.next(timeout: deadline - ContinuousClock.now) else { break }
            guard signal.path == path else { continue }
            if signal.member == PassThruMembers.audioPassThru.name {
                chunks.append(try #require(AudioChunk(audioPassThru: signal.body), "\(CaptureContract.PassThru.audioPassThru.name) \(signal.body.map(\.type)) is not as declared"))
            } else if signal.member == PassThruMembers.finished.name {
                let result = try #require(PassThruResult(finished: signal.body), "Finished \(signal.body) is not as declared")
                return Recording(chunks: chunks, result: result)
            }
        }
        throw HarnessError("no Finished from \(path) within \(timeout)")
    }

    /// Performs a pass-thru through the client, runs `action` on it, and collects it to the
    /// end (each suite's time limit stops a pass-thru that never finishes).
    func record(_ request: AudioPassThruRequest, while action: (PassThru) async throws -> Void = { _ in }) async throws -> Recording {
        let passThru = try await capture.perform(request)
        try await action(passThru)
        var chunks: [AudioChunk] = []
        for await chunk in passThru { chunks.append(chunk) }
        return Recording(chunks: chunks, result: try await passThru.result)
    }

    /// The pipe of `passThru`'s PCM (`OpenStream`), read by the test itself.
    static func openStream(_ passThru: PassThru) async throws -> StreamPipe {
        StreamPipe(try #require(try await passThru.openStream().take()))
    }

    /// A pipe's read end, closed by `close()` or when dropped.
    final class StreamPipe: Sendable {
        private let descriptor: Mutex<Int32?>
        init(_ descriptor: Int32) { self.descriptor = Mutex(descriptor) }
        var rawValue: Int32? { descriptor.withLock { $0 } }
        func close() { descriptor.withLock { fd in if let open = fd { Glibc.close(open) }; fd = nil } }
        deinit { close() }
    }

    /// Reads the stream `fd` into `bytes` until they are at least `count` long, or to EOF.
    static func read(_ fd: Int32, into bytes: inout [UInt8], atLeast count: Int = .max) async {
        let wanted = count == .max ? Int.max : count - bytes.count
        bytes += await offThePool {
            var got: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while got.count < wanted {
                let n = Glibc.read(fd, &buffer, buffer.count)
                if n <= 0 { break }
                got += buffer[0..<n]
            }
            return got
        }
    }

    /// One read of at most `limit` bytes from `fd`: what it returned, empty at EOF or on
    /// an error.
    static func readOnce(_ fd: Int32, limit: Int) async -> [UInt8] {
        await offThePool {
            var buffer = [UInt8](repeating: 0, count: limit)
            let n = Glibc.read(fd, &buffer, limit)
            return n > 0 ? Array(buffer[0..<n]) : []
        }
    }

    /// Runs blocking `work` on a thread of its own. A read that waits for the service on
    /// the cooperative pool holds one of its threads (two on a 2-core machine): tests
    /// running beside it could then not take their own streams, and the service, seeing
    /// those readers take nothing, would rightly give up on them.
    private static func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: work()) }.start()
        }
    }

    /// Bytes of a ramp that never repeats within 64 KiB, so misplaced bytes show.
    static func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
    }
}
