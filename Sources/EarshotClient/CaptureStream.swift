import EarshotContract
import EarshotDBus
import EarshotSync
import Glibc

/// The PCM of a pass-thru through `OpenStream`'s pipe (`Delivery` `stream` or `both`): the
/// same bytes as the chunks, from the moment it was opened to the end. Read it as an
/// `AsyncSequence` of byte blocks (read on a thread of its own, never in the cooperative
/// pool), or take the descriptor (`take()`) and read it yourself.
public final class PCMStream: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    private let fd: UnixFD

    init(fd: UnixFD) { self.fd = fd }

    /// The pipe's read end, now the caller's to read and close; later iteration yields nothing.
    public func take() -> Int32? { fd.take() }

    public func makeAsyncIterator() -> AsyncStream<[UInt8]>.Iterator {
        let (blocks, continuation) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .unbounded)
        guard let raw = fd.take() else {
            continuation.finish()
            return blocks.makeAsyncIterator()
        }
        let reading = Threads.detached(name: "earshot-pcm") {
            defer { Glibc.close(raw) }
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(raw, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                if case .terminated = continuation.yield(Array(buffer[0..<count])) { break }
            }
            continuation.finish()
        }
        if case .failure = reading {
            Glibc.close(raw)
            continuation.finish()
        }
        return blocks.makeAsyncIterator()
    }
}

extension PassThru {
    private typealias Members = CaptureContract.PassThru

    /// The user ends it with SUCCESS (the HMI's Done).
    public func done() async throws { try await PassThruControl(path: path, calls: calls).done() }

    /// The user asks to record again: it ends with RETRY.
    public func retry() async throws { try await PassThruControl(path: path, calls: calls).retry() }

    /// A pipe with its PCM from now to the end (owner only).
    public func openStream() async throws -> PCMStream { try await PassThruControl(path: path, calls: calls).openStream() }

    /// `prompting`, `recording` or `finished`.
    public func state() async throws -> PassThruState { try await read(.state) }

    /// When it ends by its MaxDuration (CLOCK_MONOTONIC µs); nil until known.
    public func endsAtMonotonicUs() async throws -> UInt64? {
        let value = try await read(.endsAtMonotonicUs)
        return value == 0 ? nil : value
    }

    /// Interleaved channels per frame (the session may have asked for stereo).
    public func channels() async throws -> UInt32 { try await read(.channels) }
}

/// The user's actions on any pass-thru, by its object (an HMI acting on the pass-thru
/// that records, whoever started it).
public struct PassThruControl: Sendable {
    private typealias Members = CaptureContract.PassThru
    public let path: ObjectPath
    let calls: ServiceCalls

    /// The user ends it with SUCCESS (Done).
    public func done() async throws {
        _ = try await calls.call(path, Members.interface, Members.done)
    }

    /// The user cancels it: ABORTED.
    public func cancel() async throws {
        _ = try await calls.call(path, Members.interface, Members.cancel)
    }

    /// The user asks to record again: RETRY.
    public func retry() async throws {
        _ = try await calls.call(path, Members.interface, Members.retry)
    }

    /// A pipe with its PCM from now to the end (`OpenStream`; owner only): for a pass-thru
    /// started with `start`, its audio taken from the pipe.
    public func openStream() async throws -> PCMStream {
        let reply = try await calls.call(path, Members.interface, Members.openStream)
        guard let fd = reply.first?.unixFDValue else {
            throw EarshotError(name: DBusError.prefix + "Failed", message: "\(Members.openStream.name) replied \(reply)")
        }
        return PCMStream(fd: fd)
    }

    /// The owner ends it with SUCCESS, keeping what was heard (`End`; anyone else is
    /// refused with Disallowed).
    public func end() async throws {
        _ = try await calls.call(path, Members.interface, Members.end)
    }
}

extension CaptureProxy {
    private typealias Manager = CaptureContract.Manager
    private var managerPath: ObjectPath { ObjectPath(declared: CaptureContract.managerPath) }

    /// The user's actions on the pass-thru at `path`.
    public func passThru(at path: ObjectPath) -> PassThruControl { PassThruControl(path: path, calls: calls) }

    /// Ends the caller's active pass-thru with SUCCESS (`EndAudioPassThru`).
    public func endActive() async throws {
        _ = try await calls.call(managerPath, Manager.interface, Manager.endAudioPassThru)
    }

    /// What the input in use accepts.
    public func capabilities() async throws -> [CaptureCapability] {
        let value = try await calls.property(managerPath, Manager.interface, Manager.capabilities)
        return (value.arrayValue ?? []).compactMap { entry in
            let keys = Manager.CapabilityKeys.self
            guard let fields = entry.stringKeyedValue, let rate = fields[keys.samplingRate.name]?.uint32Value,
                  let bits = fields[keys.bitsPerSample.name]?.uint32Value else { return nil }
            return CaptureCapability(samplingRate: rate, bitsPerSample: bits, audioType: fields[keys.audioType.name]?.stringValue ?? "",
                                     noiseSuppression: fields[keys.noiseSuppression.name]?.stringArrayValue ?? ["off"],
                                     bargeIn: fields[keys.bargeIn.name]?.boolValue ?? false,
                                     echoCancel: fields[keys.echoCancel.name]?.boolValue ?? false)
        }
    }

    /// The ALSA PCM in use.
    public func device() async throws -> String { try await read(.device) }

    /// The active pass-thru's object, nil when idle.
    public func active() async throws -> ObjectPath? { try await read(.active) }

    /// The active pass-thru's object, now and after every change, given to `onChange` as
    /// soon as the change is read; nil while idle or the capture service is not on the bus.
    public func followActive(_ onChange: @escaping @Sendable (ObjectPath?) -> Void) async throws -> PropertyFollowing {
        try await calls.follow(managerPath, Manager.interface, Manager.active) { value in
            onChange(value?.objectPathValue.flatMap { $0 == .root ? nil : $0 })
        }
    }

    /// When the active pass-thru ends by its MaxDuration (CLOCK_MONOTONIC µs), now and after
    /// every change, given to `onChange` as soon as the change is read; nil while none
    /// records or the capture service is not on the bus.
    public func followEndsAtMonotonicUs(_ onChange: @escaping @Sendable (UInt64?) -> Void) async throws -> PropertyFollowing {
        try await calls.follow(managerPath, Manager.interface, Manager.endsAtMonotonicUs) { value in
            onChange(value?.uint64Value.flatMap { $0 == 0 ? nil : $0 })
        }
    }

    /// The same as a sequence, until the connection closes or the sequence is dropped.
    public func observeEndsAtMonotonicUs() async throws -> AsyncStream<UInt64?> {
        let (values, continuation) = AsyncStream<UInt64?>.makeStream()
        let following = try await followEndsAtMonotonicUs { continuation.yield($0) }
        continuation.onTermination = { _ in following.cancel() }
        return values
    }

    /// When the active pass-thru ends by its MaxDuration (CLOCK_MONOTONIC µs); nil when idle.
    public func endsAtMonotonicUs() async throws -> UInt64? {
        let value = try await read(.endsAtMonotonicUs)
        return value == 0 ? nil : value
    }
}

/// One format the input accepts.
public struct CaptureCapability: Sendable, Equatable {
    public let samplingRate: UInt32
    public let bitsPerSample: UInt32
    public let audioType: String
    /// The `NoiseSuppression` levels a pass-thru at this rate may ask for (`off` alone
    /// where speech processing is not installed or does not work at this rate).
    public let noiseSuppression: [String]
    /// Whether a pass-thru at this rate may ask for `BargeIn`.
    public let bargeIn: Bool
    /// Whether a pass-thru at this rate may ask for `EchoCancel`.
    public let echoCancel: Bool

    public init(samplingRate: UInt32, bitsPerSample: UInt32, audioType: String, noiseSuppression: [String] = ["off"], bargeIn: Bool = false,
                echoCancel: Bool = false) {
        self.samplingRate = samplingRate
        self.bitsPerSample = bitsPerSample
        self.audioType = audioType
        self.noiseSuppression = noiseSuppression
        self.bargeIn = bargeIn
        self.echoCancel = echoCancel
    }
}
