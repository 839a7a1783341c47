import CPipeWireMixer
import EarshotSync
import Glibc

/// A node the PipeWire daemon has: a playback or capture stream, a sink or a source.
public struct PipeWireNode: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case playback, capture, sink, source }

    public let id: UInt32
    /// `object.serial`: unique for the daemon's life (ids are reused), 0 when absent.
    public let serial: UInt64
    public let kind: Kind
    public let clientID: UInt32
    /// `application.process.id` on the node itself (0 when absent; the client's is better).
    public let pid: Int32
    public let name: String
    public let description: String
    public let application: String
    public let role: String
    /// `earshot.stream`: a key the program (and its children, through `PIPEWIRE_PROPS` or
    /// `PULSE_PROP`) put on its streams, "" when absent.
    public let streamKey: String
    /// The stream's master gain (`Props.volume`), nil until it has been read.
    public let volume: Double?
    public let muted: Bool
    /// The stream's own per-channel levels (`Props.channelVolumes`, as its user and
    /// WirePlumber set them), empty until read.
    public let channelVolumes: [Double]
    /// The software levels applied instead once set (`Props.softVolumes`, `softMute`):
    /// what the session lowers streams with, and WirePlumber does not store.
    public let softVolumes: [Double]
    public let softMuted: Bool

    public init(id: UInt32, serial: UInt64, kind: Kind, clientID: UInt32 = 0, pid: Int32 = 0, name: String,
                description: String = "", application: String = "", role: String = "", streamKey: String = "",
                volume: Double? = nil, muted: Bool = false,
                channelVolumes: [Double] = [], softVolumes: [Double] = [], softMuted: Bool = false) {
        self.id = id
        self.serial = serial
        self.kind = kind
        self.clientID = clientID
        self.pid = pid
        self.name = name
        self.description = description
        self.application = application
        self.role = role
        self.streamKey = streamKey
        self.volume = volume
        self.muted = muted
        self.channelVolumes = channelVolumes
        self.softVolumes = softVolumes
        self.softMuted = softMuted
    }
}

/// What the daemon tells the mixer, in the order it happened.
public enum PipeWireEvent: Sendable, Equatable {
    /// Connected, and the registry has been read.
    case attached
    /// The connection is lost or cannot be made; every node and client was removed first.
    case detached(String)
    case node(PipeWireNode)
    case nodeRemoved(UInt32)
    /// A client with its process id (from the socket's credentials when known), and whether
    /// it is a proxy for programs of its own (pipewire-pulse's clients, whose process is
    /// pipewire-pulse's: the program's own id is on its streams).
    case client(id: UInt32, pid: Int32, application: String, proxy: Bool)
    case clientRemoved(UInt32)
    /// The daemon's default sink or source by node name (nil: none).
    case defaultSink(String?)
    case defaultSource(String?)
    /// A link from one node's outputs to another's inputs (only with `followLinks`).
    case link(id: UInt32, output: UInt32, input: UInt32)
    case linkRemoved(UInt32)
}

public struct PipeWireError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The C mixer's pointer, so that it may cross threads.
///
/// `@unchecked Sendable` is sound: every `earshot_pw_mixer_*` function takes the thread
/// loop's own lock before touching the mixer, so calls from any thread are serialized with
/// the loop; and `PipeWireMixer` frees the pointer only under its `handle` lock, after
/// which no holder of that lock can see it again.
private struct RawMixer: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// A connection to the PipeWire daemon on its own thread loop (libpipewire's
/// `pw_thread_loop`), never on the caller's: it follows the registry and reports each
/// change through `onEvent` (called on the loop's thread; it must return quickly), sets
/// playback streams' volume and mute, and reconnects by itself when the daemon restarts.
public final class PipeWireMixer: Sendable {
    /// The callback's owner, handed to C as its `user` pointer.
    private final class Sink: Sendable {
        let onEvent: @Sendable (PipeWireEvent) -> Void
        init(_ onEvent: @escaping @Sendable (PipeWireEvent) -> Void) { self.onEvent = onEvent }
    }

    /// The C mixer, nil once closed. Its functions lock the loop themselves, so calls from
    /// any thread are safe; `handle`'s lock only orders them against `close`.
    private let handle: Locked<RawMixer?>
    private let sink: Unmanaged<Sink>

    /// Whether a daemon accepts connections on `remote` (nil: the usual socket,
    /// `$XDG_RUNTIME_DIR/pipewire-0` unless `PIPEWIRE_REMOTE` says otherwise).
    public static func daemonAnswers(remote: String? = nil) -> Bool {
        earshot_pw_probe(remote) == 0
    }

    /// The socket `daemonAnswers` tries; nil when no runtime directory is set.
    public static func socketPath(remote: String? = nil) -> String? {
        var path = [CChar](repeating: 0, count: 108)
        guard earshot_pw_socket_path(remote, &path, path.count) == 0 else { return nil }
        return String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Starts the loop and the first connection attempt; when the daemon is not there, or
    /// goes, it tries again every `retry`. Links are reported only with `followLinks`.
    public init(remote: String? = nil, clientName: String, retry: Duration = .milliseconds(250), followLinks: Bool = false,
                onEvent: @escaping @Sendable (PipeWireEvent) -> Void) throws {
        let sink = Unmanaged.passRetained(Sink(onEvent))
        var callbacks = earshot_pw_callbacks()
        callbacks.state = { user, connected, message in
            let event: PipeWireEvent = connected != 0 ? .attached : .detached(message.map { String(cString: $0) } ?? "")
            Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue().onEvent(event)
        }
        callbacks.node = { user, node in
            guard let node = node?.pointee else { return }
            let kind: PipeWireNode.Kind = switch node.kind {
            case EARSHOT_PW_CAPTURE: .capture
            case EARSHOT_PW_SINK: .sink
            case EARSHOT_PW_SOURCE: .source
            default: .playback
            }
            let levels = { (values: UnsafeRawBufferPointer, count: UInt32) -> [Double] in
                values.bindMemory(to: Float.self).prefix(Int(count)).map(Double.init)
            }
            var channels = node.channel_volumes, soft = node.soft_volumes
            let value = PipeWireNode(id: node.id, serial: node.serial, kind: kind, clientID: node.client_id, pid: node.pid,
                                     name: String(cString: node.name), description: String(cString: node.description),
                                     application: String(cString: node.application), role: String(cString: node.role),
                                     streamKey: String(cString: node.stream_key),
                                     volume: node.has_volume != 0 ? Double(node.volume) : nil, muted: node.mute != 0,
                                     channelVolumes: withUnsafeBytes(of: &channels) { levels($0, node.n_channels) },
                                     softVolumes: withUnsafeBytes(of: &soft) { levels($0, node.n_soft) },
                                     softMuted: node.soft_mute != 0)
            Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue().onEvent(.node(value))
        }
        callbacks.node_removed = { user, id in
            Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue().onEvent(.nodeRemoved(id))
        }
        callbacks.client = { user, id, pid, application, proxy in
            let name = application.map { String(cString: $0) } ?? ""
            Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue().onEvent(.client(id: id, pid: pid, application: name, proxy: proxy != 0))
        }
        callbacks.client_removed = { user, id in
            Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue().onEvent(.clientRemoved(id))
        }
        callbacks.default_node = { user, which, name in
            let node = name.map { String(cString: $0) }
            let event: PipeWireEvent = String(cString: which!) == "sink" ? .defaultSink(node) : .defaultSource(node)
            Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue().onEvent(event)
        }
        if followLinks {
            callbacks.link = { user, id, output, input in
                Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue().onEvent(.link(id: id, output: output, input: input))
            }
            callbacks.link_removed = { user, id in
                Unmanaged<Sink>.fromOpaque(user!).takeUnretainedValue().onEvent(.linkRemoved(id))
            }
        }
        let retryMs = Self.milliseconds(retry)
        var message = [CChar](repeating: 0, count: 256)
        guard let mixer = earshot_pw_mixer_new(remote, clientName, &callbacks, sink.toOpaque(), max(1, retryMs), &message, message.count) else {
            sink.release()
            throw PipeWireError(String(nulTerminated: message))
        }
        handle = Locked(RawMixer(pointer: mixer))
        self.sink = sink
    }

    deinit { close() }

    /// A duration as the C mixer's whole milliseconds.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        Int32(clamping: duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// Sets a playback stream's master volume and mute (nil: unchanged).
    public func set(_ id: UInt32, volume: Double?, muted: Bool?) throws(PipeWireError) {
        let result = handle.withLock { mixer -> Int32 in
            guard let mixer else { return -ENOTCONN }
            return earshot_pw_mixer_set(mixer.pointer, id, Float(volume ?? -1), muted.map { $0 ? 1 : 0 } ?? -1)
        }
        guard result == 0 else {
            throw PipeWireError("cannot set stream \(id): \(String(cString: strerror(-result)))")
        }
    }

    /// Sets a playback stream's software levels, one per channel, and software mute: applied
    /// instead of its own channel levels and mute until anyone sets those, and not stored
    /// by WirePlumber.
    public func setSoft(_ id: UInt32, volumes: [Double], muted: Bool) throws(PipeWireError) {
        let levels = volumes.map(Float.init)
        let result = handle.withLock { mixer -> Int32 in
            guard let mixer else { return -ENOTCONN }
            return levels.withUnsafeBufferPointer { earshot_pw_mixer_set_soft(mixer.pointer, id, $0.baseAddress, UInt32($0.count), muted ? 1 : 0) }
        }
        guard result == 0 else {
            throw PipeWireError("cannot set stream \(id)'s software levels: \(String(cString: strerror(-result)))")
        }
    }

    /// Waits (blocking this thread) until the daemon has handled everything sent so far.
    /// False on a timeout or without a connection.
    @discardableResult
    public func sync(timeout: Duration = .seconds(1)) -> Bool {
        let timeoutMs = Self.milliseconds(timeout)
        // Held through the wait so that `close` cannot free the C mixer under it; the
        // loop's thread never takes this lock, so the wait always ends.
        return handle.withLock { mixer in
            guard let mixer else { return false }
            return earshot_pw_mixer_sync(mixer.pointer, timeoutMs) == 0
        }
    }

    /// Stops the loop and disconnects; no event is reported after it returns.
    public func close() {
        let freed = handle.withLock { mixer -> Bool in
            guard let raw = mixer else { return false }
            mixer = nil
            earshot_pw_mixer_free(raw.pointer)
            return true
        }
        if freed { sink.release() }
    }
}
