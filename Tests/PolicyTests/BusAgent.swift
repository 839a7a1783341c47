import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc

/// A bus client of its own, running as another user: a small python3 program (the `dbus`
/// module) that connects to the bus, then answers one JSON request per line on stdin
/// (a method call) with one JSON line on stdout (the reply's values, or the error's name
/// and message). It stays connected between requests, so what it creates stays its own.
///
/// The agent's stdin and stdout are one end of a socket pair; the other end is the
/// agent's `channel`, written by `call` and read by a thread of its own (the reads block),
/// which closes it at end of file. One request at a time: `call` is not to be used from two
/// tasks at once.
final class BusAgent: Sendable {
    let user: String
    /// The agent's unique name on the bus.
    let uniqueName: String
    private let process: ChildProcess
    /// The socket to the agent while it is open.
    private let channel: Locked<Int32?>
    private let replies: AsyncStream<String>
    private let logPath: String

    /// The agent's program. Arguments come as JSON and are converted by the method's
    /// signature; a variant's value comes as `[signature, value]`. A returned file
    /// descriptor is read once (what the first read gives) and closed; the reply then
    /// holds `{"fdBytes": count}`.
    static let program = #"""
        import json
        import os
        import sys

        import dbus
        import dbus.bus

        BASIC = {
            'y': dbus.Byte, 'b': dbus.Boolean, 'n': dbus.Int16, 'q': dbus.UInt16, 'i': dbus.Int32,
            'u': dbus.UInt32, 'x': dbus.Int64, 't': dbus.UInt64, 'd': dbus.Double, 's': dbus.String,
            'o': dbus.ObjectPath, 'g': dbus.Signature,
        }


        def typed(signature, value):
            """`value` (from JSON) as the single complete D-Bus type `signature`."""
            code = signature[0]
            if code == 'v':
                inner, content = value
                return typed(inner, content)
            if signature.startswith('a{'):
                key, item = list(dbus.Signature(signature[2:-1]))
                return dbus.Dictionary({typed(key, int(k) if key in 'ynqiuxt' else k): typed(item, v)
                                        for k, v in value.items()}, signature=key + item)
            if code == 'a':
                return dbus.Array([typed(signature[1:], v) for v in value], signature=signature[1:])
            if code == '(':
                fields = list(dbus.Signature(signature[1:-1]))
                return dbus.Struct([typed(f, v) for f, v in zip(fields, value)], signature=signature[1:-1])
            return BASIC[code](value)


        def plain(value):
            """A reply value as JSON."""
            if isinstance(value, dbus.Boolean):
                return bool(value)
            if isinstance(value, dbus.types.UnixFd):
                fd = value.take()
                try:
                    return {'fdBytes': len(os.read(fd, 65536))}
                finally:
                    os.close(fd)
            if isinstance(value, dict):
                return {str(k): plain(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [plain(v) for v in value]
            return value


        def answer(connection, request):
            signature = request.get('signature', '')
            args = [typed(t, v) for t, v in zip(dbus.Signature(signature), request.get('args', []))]
            try:
                reply = connection.call_blocking(request['destination'], request['path'], request['interface'],
                                                 request['member'], signature, args, timeout=request.get('timeout', 20))
            except dbus.exceptions.DBusException as error:
                return {'error': error.get_dbus_name(), 'message': error.get_dbus_message()}
            if reply is None:
                values = []
            elif type(reply) is tuple:
                values = list(reply)
            else:
                values = [reply]
            return {'values': [plain(v) for v in values]}


        def main():
            connection = dbus.bus.BusConnection(sys.argv[1])
            print(json.dumps({'uniqueName': connection.get_unique_name()}), flush=True)
            while True:
                line = sys.stdin.readline()
                if not line:
                    break
                try:
                    reply = answer(connection, json.loads(line))
                except Exception as error:
                    reply = {'error': 'agent', 'message': repr(error)}
                print(json.dumps(reply), flush=True)


        main()
        """#

    /// Starts the program at `script` as `user`, connected to the bus at `address`; its
    /// stderr goes to `logPath`. Returns once it is on the bus.
    static func start(user: String, script: URL, address: String, logPath: String) async throws -> BusAgent {
        var pair: [Int32] = [-1, -1]
        // Close-on-exec from the start, so no other child started meanwhile inherits them.
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw HarnessError("socketpair: \(String(cString: strerror(errno)))")
        }
        let process: ChildProcess
        do {
            let environment = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
            process = try ChildProcess(try TestUser.commandPrefix(user) + ["/usr/bin/python3", "-I", "-u", script.path, address],
                                       environment: environment, stdin: pair[1], stdout: pair[1], logPath: logPath)
        } catch {
            close(pair[0])
            close(pair[1])
            throw error
        }
        close(pair[1])
        let channel = Locked<Int32?>(pair[0])
        let replies = Self.readLines(channel)
        let uniqueName: String
        do {
            let first = try await Self.nextLine(replies, timeout: .seconds(20), process: process, logPath: logPath)
            guard case .string(let name)? = try JSONValue.parse(first)["uniqueName"] else {
                throw HarnessError("agent \(user) did not connect: \(first)")
            }
            uniqueName = name
        } catch {
            await process.terminate()
            throw error
        }
        return BusAgent(user: user, uniqueName: uniqueName, process: process, channel: channel, replies: replies, logPath: logPath)
    }

    private init(user: String, uniqueName: String, process: ChildProcess, channel: Locked<Int32?>, replies: AsyncStream<String>,
                 logPath: String) {
        self.user = user
        self.uniqueName = uniqueName
        self.process = process
        self.channel = channel
        self.replies = replies
        self.logPath = logPath
    }

    /// Calls `member` and returns the reply, or the error the agent got.
    func call(_ destination: String, _ path: String, _ interface: String, _ member: String, signature: String = "",
              _ arguments: [AgentArgument] = []) async throws -> AgentReply {
        let request: [String: Any] = [
            "destination": destination, "path": path, "interface": interface, "member": member,
            "signature": signature, "args": arguments.map(\.json),
        ]
        var line = try JSONSerialization.data(withJSONObject: request)
        line.append(UInt8(ascii: "\n"))
        // A request is far smaller than a socket's buffer: the write does not block.
        let written = channel.withLock { fd in
            fd.map { fd in line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } } ?? -1
        }
        guard written == line.count else {
            throw HarnessError("agent \(user): cannot send the request (\(process.isRunning ? "running" : "ended")): \(logText)")
        }
        let text = try await Self.nextLine(replies, timeout: .seconds(30), process: process, logPath: logPath)
        guard case .object(let reply) = try JSONValue.parse(text) else { throw HarnessError("agent \(user): \(text)") }
        if case .string(let name)? = reply["error"] {
            if case .string(let message)? = reply["message"] { return AgentReply(errorName: name, message: message, values: []) }
            return AgentReply(errorName: name, message: "", values: [])
        }
        guard case .array(let values)? = reply["values"] else { throw HarnessError("agent \(user): \(text)") }
        return AgentReply(errorName: nil, message: "", values: values)
    }

    /// `org.freedesktop.DBus.Properties.Get`.
    func property(_ destination: String, _ path: String, _ interface: String, _ name: String) async throws -> AgentReply {
        try await call(destination, path, "org.freedesktop.DBus.Properties", "Get", signature: "ss",
                       [.string(interface), .string(name)])
    }

    /// Ends the agent (end of its input, then a signal if it lingers): it leaves the bus.
    func shutdown() async {
        channel.withLock { fd in
            if let fd { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
        }
        if await process.waitForExit(timeout: .seconds(5)) == nil { await process.terminate() }
    }

    deinit { process.stop() }

    /// What the agent logged on stderr.
    var logText: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The lines read from `channel` on a thread of their own, until end of file or an
    /// error; closes it then.
    private static func readLines(_ channel: Locked<Int32?>) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        // Only this thread closes the descriptor, so it stays valid while it reads.
        let fd = channel.withLock { $0 ?? -1 }
        let thread = Thread {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                pending += buffer[0..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
            channel.withLock { open in
                if let open { close(open) }
                open = nil
            }
            continuation.finish()
        }
        thread.start()
        return stream
    }

    /// The next line, or an error when the agent ends or does not answer within `timeout`
    /// (the lines then end too: a cancelled wait ends an `AsyncStream`).
    private static func nextLine(_ lines: AsyncStream<String>, timeout: Duration, process: ChildProcess,
                                 logPath: String) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        let line: String? = await withTaskGroup(of: String?.self) { group in
            group.addTask {
                var iterator = lines.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try? await Task.sleep(until: deadline)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let line else {
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            throw HarnessError(process.isRunning ? "the agent did not answer within \(timeout): \(log)"
                                                 : "the agent ended (status \(process.exitStatus ?? -1)): \(log)")
        }
        return line
    }
}

/// A request argument, as JSON the agent converts by the method's signature.
indirect enum AgentArgument: Sendable {
    case string(String)
    case integer(Int64)
    case boolean(Bool)
    case double(Double)
    case list([AgentArgument])
    case dictionary([String: AgentArgument])
    /// A variant: the value's own signature, and the value.
    case variant(String, AgentArgument)

    static func u(_ value: UInt32) -> AgentArgument { .variant("u", .integer(Int64(value))) }
    static func s(_ value: String) -> AgentArgument { .variant("s", .string(value)) }
    static func b(_ value: Bool) -> AgentArgument { .variant("b", .boolean(value)) }

    var json: Any {
        switch self {
        case .string(let value): value
        case .integer(let value): value
        case .boolean(let value): value
        case .double(let value): value
        case .list(let items): items.map(\.json)
        case .dictionary(let items): items.mapValues(\.json)
        case .variant(let signature, let value): [signature, value.json]
        }
    }
}

/// What the agent got back: the reply's values, or an error.
struct AgentReply: Sendable, CustomStringConvertible {
    /// The D-Bus error's name; nil for a method return.
    let errorName: String?
    let message: String
    let values: [JSONValue]

    var succeeded: Bool { errorName == nil }
    /// The first value as a string (object paths and ids).
    var firstString: String? {
        if case .string(let text)? = values.first { return text }
        return nil
    }

    var description: String {
        errorName.map { "\($0): \(message)" } ?? "reply \(values)"
    }
}

/// A JSON value.
enum JSONValue: Sendable, Equatable, Decodable {
    case null
    case boolean(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .boolean(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    static func parse(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    subscript(key: String) -> JSONValue? {
        if case .object(let items) = self { return items[key] }
        return nil
    }
}
