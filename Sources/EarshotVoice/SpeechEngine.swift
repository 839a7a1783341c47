import EarshotSync
import Glibc

/// The process's one speech engine: libespeak-ng in the helper process `earshot-speak`,
/// started at the first synthesis and ended by `release`, reached over a socket that is
/// its standard input and output (the protocol is in `Sources/earshot-speak/main.c`).
///
/// libespeak-ng is not loaded into the service itself: what it brings (libpcaudio and
/// PulseAudio's client libraries, which are marked never to be unloaded) would stay in
/// the service for good after its first speech; in a process of its own it goes when the
/// helper ends.
final class SpeechEngine: @unchecked Sendable {
    // @unchecked Sendable: `helper` is read and written only inside `lock.withLock`, and
    // the helper's socket is used only there, one request and its reply at a time.
    static let shared = SpeechEngine()

    /// The helper's executable name, looked for next to the executable and in
    /// `../lib/earshot` from it (where `deploy/install` puts it).
    static let helperName = "earshot-speak"

    private let lock = ThreadLock()
    private var helper: Helper?

    /// A running helper: its process and this end of its socket.
    private struct Helper {
        let pid: pid_t
        let socket: Int32
    }

    /// Starts the helper (unless running) and has it select `voice`; returns the engine's
    /// sample rate.
    func prepare(voice: String) throws(SpeechError) -> Int {
        try lock.withLock { () throws(SpeechError) -> Int in
            let request = Request(op: "P", voice: voice)
            return try exchangeLocked(request, samples: false).rate
        }
    }

    func synthesize(_ input: String, voice: String, wordsPerMinute: Int32, phonemeInput: Bool) throws(SpeechError) -> (rate: Int, samples: [Int16]) {
        try lock.withLock { () throws(SpeechError) -> (rate: Int, samples: [Int16]) in
            var request = Request(op: "S", voice: voice)
            request.append(wordsPerMinute)
            request.append(UInt32(phonemeInput ? 1 : 0))
            request.append(bytes: Array(input.utf8))
            return try exchangeLocked(request, samples: true)
        }
    }

    /// Ends the helper, if running: it exits at the end of its input, and libespeak-ng with
    /// it. The next synthesis starts another.
    func release() {
        lock.withLock { _ = stopLocked() }
    }

    /// The running helper's process id, if one runs.
    var helperProcessID: Int32? { lock.withLock { helper?.pid } }

    /// The bytes of one request.
    private struct Request {
        var bytes: [UInt8] = []
        init(op: Character, voice: String) {
            bytes.append(op.asciiValue ?? 0)
            append(bytes: Array(voice.utf8))
        }
        mutating func append<Value: FixedWidthInteger>(_ value: Value) {
            withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
        }
        mutating func append(bytes more: [UInt8]) {
            append(UInt32(more.count))
            bytes.append(contentsOf: more)
        }
    }

    /// Sends `request` and reads its reply, starting the helper first if none runs. A
    /// helper that fails to answer (one that died since its last reply, say) is ended and
    /// another started for the same request, once: a second failure is the error.
    private func exchangeLocked(_ request: Request, samples: Bool) throws(SpeechError) -> (rate: Int, samples: [Int16]) {
        if case .answered(let rate, let got) = try attemptLocked(request, samples: samples) { return (rate, got) }
        switch try attemptLocked(request, samples: samples) {
        case .answered(let rate, let got): return (rate, got)
        case .broke(let why): throw .engineUnavailable(why)
        }
    }

    /// How one attempt at a request ended when the helper did not refuse it.
    private enum Attempt {
        /// The helper's reply.
        case answered(rate: Int, samples: [Int16])
        /// The helper ended or broke off before its reply was whole (why, for the error);
        /// it has been ended.
        case broke(String)
    }

    private func attemptLocked(_ request: Request, samples: Bool) throws(SpeechError) -> Attempt {
        let running = try startLocked()
        do {
            try Self.send(request.bytes, to: running.socket)
            let status: Int32 = try Self.receive(from: running.socket)
            guard status == 0 else {
                let code: Int32 = try Self.receive(from: running.socket)
                let length: UInt32 = try Self.receive(from: running.socket)
                let message = String(decoding: try Self.receiveBytes(Int(length), from: running.socket), as: UTF8.self)
                switch status {
                case 2: throw SpeechError.unknownVoice(message)
                case 3: throw SpeechError.synthesisFailed(code: code)
                default: throw SpeechError.engineUnavailable(message)
                }
            }
            let rate: UInt32 = try Self.receive(from: running.socket)
            guard samples else { return .answered(rate: Int(rate), samples: []) }
            let count: UInt32 = try Self.receive(from: running.socket)
            var result = [Int16](repeating: 0, count: Int(count))
            try result.withUnsafeMutableBytes { try Self.receiveInto($0, from: running.socket) }
            return .answered(rate: Int(rate), samples: result)
        } catch let error as SpeechError {
            throw error
        } catch {
            // The helper ended or broke off: it goes, and the next call starts another.
            let status = stopLocked()
            return .broke("\(Self.helperName) stopped answering (\(error)\(status.map { "; \($0)" } ?? ""))")
        }
    }

    /// The running helper, started if there is none.
    private func startLocked() throws(SpeechError) -> Helper {
        if let helper { return helper }
        let directories = PluginLibrary.installedDirectories
        guard let path = PluginLibrary.locate(Self.helperName, in: directories) else {
            throw .engineUnavailable("\(Self.helperName) is not installed (looked in \(directories.joined(separator: ", ")))")
        }
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw .engineUnavailable("socketpair: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copies: the helper keeps its end as fds 0 and 1.
        posix_spawn_file_actions_adddup2(&actions, ends[1], STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, ends[1], STDOUT_FILENO)
        var pid: pid_t = 0
        let arguments = [strdup(path), nil]
        defer { arguments.forEach { free($0) } }
        let spawned = posix_spawn(&pid, path, &actions, nil, arguments, environ)
        close(ends[1])
        guard spawned == 0 else {
            close(ends[0])
            throw .engineUnavailable("cannot start \(path): \(String(cString: strerror(spawned)))")
        }
        let started = Helper(pid: pid, socket: ends[0])
        helper = started
        return started
    }

    /// Closes the helper's socket and waits for it to exit (killing it after a second);
    /// returns how it ended, when it did not end well.
    @discardableResult
    private func stopLocked() -> String? {
        guard let running = helper else { return nil }
        helper = nil
        close(running.socket)
        var status: Int32 = 0
        let deadline = monotonicNanoseconds() + 1_000_000_000
        while waitpid(running.pid, &status, WNOHANG) == 0 {
            if monotonicNanoseconds() > deadline {
                kill(running.pid, SIGKILL)
                _ = waitpid(running.pid, &status, 0)
                return "it did not exit and was killed"
            }
            usleep(1000)
        }
        let signal = status & 0x7f, code = (status >> 8) & 0xff
        if signal != 0 { return "it was ended by signal \(signal)" }
        return code == 0 ? nil : "it exited with \(code)"
    }

    /// Why the socket failed.
    private struct SocketFailure: Error, CustomStringConvertible {
        let description: String
    }

    private static func send(_ bytes: [UInt8], to socket: Int32) throws {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { throw SocketFailure(description: result == 0 ? "closed" : String(cString: strerror(errno))) }
            sent += result
        }
    }

    private static func receiveInto(_ buffer: UnsafeMutableRawBufferPointer, from socket: Int32) throws {
        var received = 0
        while received < buffer.count {
            let result = recv(socket, buffer.baseAddress! + received, buffer.count - received, 0)
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { throw SocketFailure(description: result == 0 ? "it closed its end" : String(cString: strerror(errno))) }
            received += result
        }
    }

    private static func receive<Value: FixedWidthInteger>(from socket: Int32) throws -> Value {
        var value = Value.zero
        try withUnsafeMutableBytes(of: &value) { try receiveInto($0, from: socket) }
        return value
    }

    private static func receiveBytes(_ count: Int, from socket: Int32) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try bytes.withUnsafeMutableBytes { try receiveInto($0, from: socket) }
        return bytes
    }
}
