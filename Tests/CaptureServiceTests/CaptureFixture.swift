import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// The capture service's declarations, as the contract spells them.
typealias CaptureManager = CaptureContract.Manager
typealias RequestKeys = CaptureContract.Manager.Keys
typealias PassThru = CaptureContract.PassThru
typealias FinishedKeys = CaptureContract.PassThru.FinishedKeys

/// A private bus, a file-backed ALSA microphone `mic` and the real earshot-capture.
struct CaptureFixture {
    static let busName = CaptureContract.busName
    static let path = ObjectPath(declared: CaptureContract.managerPath)
    /// The manager's interface (at `path`) and each pass-thru's.
    static let manager = CaptureManager.interface.name
    static let passThru = PassThru.interface.name

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

    static func request(rate: UInt32 = 16000, bits: UInt32 = 16, maxMs: UInt32 = 1000,
                        _ extra: [String: DBusValue] = [:]) -> [String: DBusValue] {
        var request: [String: DBusValue] = [
            RequestKeys.samplingRate.name: .uint32(rate), RequestKeys.bitsPerSample.name: .uint32(bits),
            RequestKeys.audioType.name: .string("PCM"), RequestKeys.maxDuration.name: .uint32(maxMs),
        ]
        request.merge(extra) { _, new in new }
        return request
    }

    func perform(_ request: [String: DBusValue], on connection: DBusConnection? = nil) async throws -> ObjectPath {
        let reply = try await (connection ?? client).call(destination: Self.busName, path: Self.path, interface: Self.manager,
                                                          member: CaptureManager.performAudioPassThru.name, [.vardict(request)])
        return try #require(reply.first?.objectPathValue)
    }

    func call(_ method: MethodDeclaration, path: ObjectPath, interface: String = passThru,
              on connection: DBusConnection? = nil) async throws -> [DBusValue] {
        try await (connection ?? client).call(destination: Self.busName, path: path, interface: interface, member: method.name)
    }

    func property(_ property: PropertyDeclaration, path: ObjectPath, interface: String = passThru) async throws -> DBusValue? {
        try await client.call(destination: Self.busName, path: path, interface: "org.freedesktop.DBus.Properties",
                              member: "Get", [.string(interface), .string(property.name)]).first?.variantValue
    }

    /// Everything a pass-thru sent its owner, and how it ended.
    struct Recording {
        var chunks: [(data: [UInt8], sequence: UInt64, monotonicUs: UInt64)] = []
        var resultCode = ""
        var success = false
        var info: [String: DBusValue] = [:]
        var bytes: [UInt8] { chunks.flatMap(\.data) }
        var reason: String?
    }

    /// Subscribes to the pass-thru signals a client sees (unicast chunks, broadcast Finished).
    static func subscribe(_ connection: DBusConnection) async throws -> SignalSubscription {
        try await connection.subscribe(MatchRule(sender: busName, interface: passThru))
    }

    /// Collects `path`'s chunks until its `Finished`.
    static func collect(_ subscription: SignalSubscription, path: ObjectPath, timeout: Duration = .seconds(30)) async throws -> Recording {
        var recording = Recording()
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let signal = await subscription.next(timeout: deadline - ContinuousClock.now) else { break }
            guard signal.path == path else { continue }
            // Read as EarshotClient reads them, so that these tests also prove the client's reading.
            if signal.member == PassThru.audioPassThru.name {
                let chunk = try #require(AudioChunk(audioPassThru: signal.body), "AudioPassThru \(signal.body.map(\.type)) is not as declared")
                recording.chunks.append((chunk.data, chunk.sequence, chunk.monotonicUs))
            } else if signal.member == PassThru.finished.name {
                let result = try #require(PassThruResult(finished: signal.body), "Finished \(signal.body) is not as declared")
                recording.resultCode = result.resultCode.rawValue
                recording.success = result.success
                recording.reason = result.reason.rawValue
                recording.info = signal.body[2].stringKeyedValue ?? [:]
                return recording
            }
        }
        throw HarnessError("no Finished from \(path) within \(timeout)")
    }

    /// Performs a pass-thru and collects it to the end.
    func record(_ request: [String: DBusValue], while action: (ObjectPath) async throws -> Void = { _ in }) async throws -> Recording {
        let subscription = try await Self.subscribe(client)
        let path = try await perform(request)
        try await action(path)
        return try await Self.collect(subscription, path: path)
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
