import ContractCore
import EarshotDBus
import Foundation
import Glibc

/// `org.earshot.Echo1`: a small service that exercises every part of the D-Bus binding.
/// The binding's tests drive it on a private bus, and the D-Bus benchmark measures it.
public final class EchoService: Sendable {
    static let invalidData = EarshotErrorName.invalidData.name
    /// The keys of `Options`: Mode, Count, Ratio and Name.
    static let optionKeys = [
        OptionKey("Mode", "s", doc: "How fast.", required: true, rules: [.oneOf(["fast", "slow"])], error: invalidData),
        OptionKey("Count", "u", doc: "How many.", default: "1", rules: [.range(1...10)], error: invalidData),
        OptionKey("Ratio", "d", doc: "How much.", default: "0.5", rules: [.range(0...1)], error: invalidData),
        OptionKey("Name", "s", doc: "What.", default: "\"\"", rules: [.maxLength(8)], error: invalidData),
    ]

    public static let busName = "org.earshot.Echo1"
    public static let path: ObjectPath = "/org/earshot/Echo1"
    public static let interfaceName = "org.earshot.Echo1"
    /// The one error `FailDeclared` declares.
    public static let declaredError = "org.earshot.Echo1.Error.Declared"
    public static let childInterfaceName = "org.earshot.Echo1.Child"

    /// The most bytes `ReadFD` reads from a descriptor.
    public static let readLimit = 16 << 20

    private let watchers = Locked<[String: Task<Void, Never>]>([:])

    public init() {}

    /// Exports the manager object on `connection`.
    @discardableResult
    public func export(on connection: DBusConnection) throws(DBusError) -> ExportedObject {
        try connection.export(Self.path, interfaces: [interface()],
                              properties: [Self.interfaceName: ["Label": .string("echo"), "Version": .string("1")]])
    }

    /// Stops watching peers.
    public func shutdown() {
        for task in watchers.withLock({ $0.values }) { task.cancel() }
    }

    /// The one declaration of `org.earshot.Echo1`.
    public func interface() -> DBusInterface {
        DBusInterface(Self.interfaceName, methods: [
            DBusMethod("Echo", in: [DBusArgument("value", "v")], out: [DBusArgument("value", "v")]) { call in
                [try call.argument(0)]
            },
            DBusMethod("EchoBytes", in: [DBusArgument("data", "ay")], out: [DBusArgument("data", "ay")]) { call in
                [try call.argument(0)]
            },
            DBusMethod("EmitBytes", in: [DBusArgument("count", "u"), DBusArgument("size", "u")]) { call in
                let count = try call.uint32(0), size = try call.uint32(1)
                guard size <= 1 << 20 else { throw DBusError.invalidArgs("size: \(size) is outside 0..1048576 bytes") }
                let payload = DBusValue.bytes(DBusBytes([UInt8](repeating: 0x5A, count: Int(size))))
                for sequence in 0..<UInt64(count) {
                    try call.object.emit("Bytes", [payload, .uint64(sequence)], to: call.sender)
                }
                return []
            },
            DBusMethod("ReadFD", in: [DBusArgument("fd", "h")], out: [DBusArgument("data", "ay")]) { call in
                let fd = try call.fd(0)
                return [.bytes(DBusBytes(try Self.readAll(fd)))]
            },
            DBusMethod("MakePipe", in: [DBusArgument("data", "ay")], out: [DBusArgument("fd", "h")]) { call in
                [.unixFD(try Self.pipe(holding: try call.bytes(0)))]
            },
            DBusMethod("Sleep", in: [DBusArgument("milliseconds", "u")]) { call in
                let ms = try call.uint32(0)
                guard ms <= 60_000 else { throw DBusError.invalidArgs("milliseconds: \(ms) is outside 0..60000") }
                try await Task.sleep(for: .milliseconds(ms))
                return []
            },
            DBusMethod("Fail", in: [DBusArgument("name", "s"), DBusArgument("message", "s")]) { call in
                let name = try call.string(0)
                try DBusNames.validateErrorName(name)
                throw DBusError(name: name, message: try call.string(1))
            },
            // Declares one error; replying with another is refused (UndeclaredErrors).
            DBusMethod("FailDeclared", in: [DBusArgument("name", "s")], errors: [Self.declaredError]) { call in
                throw DBusError(name: try call.string(0), message: "as asked")
            },
            DBusMethod("SetCounter", in: [DBusArgument("value", "u")]) { call in
                try call.object.set("Counter", .uint32(try call.uint32(0)))
                return []
            },
            DBusMethod("AddChild", in: [DBusArgument("name", "s")], out: [DBusArgument("child", "o")]) { call in
                let path = try Self.childPath(try call.string(0))
                try call.connection.export(path, interfaces: [Self.childInterface()],
                                           properties: [Self.childInterfaceName: ["Name": .string(try call.string(0))]])
                return [.objectPath(path)]
            },
            DBusMethod("RemoveChild", in: [DBusArgument("name", "s")]) { call in
                let path = try Self.childPath(try call.string(0))
                guard call.connection.unexport(path) != nil else {
                    throw DBusError.unknownObject("no child \(try call.string(0))")
                }
                return []
            },
            DBusMethod("WhoAmI", out: [DBusArgument("unique_name", "s"), DBusArgument("uid", "u"),
                                       DBusArgument("user", "s")]) { call in
                let caller = try await call.caller()
                return [.string(caller.uniqueName), .uint32(caller.uid), .string(caller.userName)]
            },
            DBusMethod("Broadcast", in: [DBusArgument("text", "s")]) { call in
                try call.object.emit("Note", [.string(try call.string(0))])
                return []
            },
            DBusMethod("Unicast", in: [DBusArgument("text", "s")]) { call in
                try call.object.emit("Note", [.string(try call.string(0))], to: call.sender)
                return []
            },
            DBusMethod("WatchPeer", in: [DBusArgument("name", "s")]) { [self] call in
                try await watch(try call.string(0), object: call.object)
                return []
            },
            DBusMethod("Options", in: [DBusArgument("options", "a{sv}")], out: [DBusArgument("normalized", "a{sv}")]) { call in
                let options = try DeclaredRequest(try call.argument(0), keys: EchoService.optionKeys)
                let mode: String = try options.require(EchoService.optionKeys[0])
                let count: UInt32 = try options.require(EchoService.optionKeys[1])
                let ratio: Double = try options.require(EchoService.optionKeys[2])
                let name: String = try options.require(EchoService.optionKeys[3])
                return [.vardict(["Mode": .string(mode), "Count": .uint32(count), "Ratio": .double(ratio), "Name": .string(name)])]
            },
        ], properties: [
            DBusProperty("Counter", "u"),
            DBusProperty("Label", "s", access: .readwrite) { value, _ in
                guard let text = value.stringValue, !text.isEmpty else {
                    throw DBusError(name: Self.invalidData, message: "Label: must not be empty")
                }
                return .string(text)
            },
            DBusProperty("Secret", "s", access: .readwrite, emitsChangedSignal: .invalidates) { value, _ in value },
            DBusProperty("Version", "s", emitsChangedSignal: .const),
        ], signals: [
            DBusSignal("Bytes", [DBusArgument("data", "ay"), DBusArgument("sequence", "t")]),
            DBusSignal("Note", [DBusArgument("text", "s")]),
            DBusSignal("PeerVanished", [DBusArgument("name", "s")]),
        ])
    }

    static func childInterface() -> DBusInterface {
        DBusInterface(childInterfaceName, methods: [
            DBusMethod("Ping", out: [DBusArgument("path", "o")]) { call in [.objectPath(call.path)] },
        ], properties: [
            DBusProperty("Name", "s", emitsChangedSignal: .const),
        ])
    }

    static func childPath(_ name: String) throws(DBusError) -> ObjectPath {
        guard !name.isEmpty, name.utf8.allSatisfy({ ObjectPath.isPathElementByte($0) }) else {
            throw .invalidArgs("name: '\(name)' must be letters, digits and _")
        }
        return try path.appending("Child").appending(name)
    }

    /// Emits `PeerVanished(name)` when `name` leaves the bus.
    private func watch(_ name: String, object: ExportedObject) async throws {
        let owners = try await object.connection.watchNameOwner(name)
        let task = Task {
            var sawOwner = false
            for await owner in owners {
                if owner != nil { sawOwner = true; continue }
                if sawOwner || DBusNames.isUniqueName(name) {
                    try? object.emit("PeerVanished", [.string(name)])
                    break
                }
            }
        }
        watchers.withLock { $0[name]?.cancel(); $0[name] = task }
    }

    static func readAll(_ fd: UnixFD) throws(DBusError) -> [UInt8] {
        guard let raw = fd.rawValue else { throw .invalidArgs("fd: already closed") }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(raw, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .failed("reading the descriptor failed: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            data.append(contentsOf: chunk[0..<n])
            guard data.count <= readLimit else { throw .invalidArgs("fd: more than \(readLimit) bytes") }
        }
        fd.close()
        return data
    }

    static func pipe(holding data: DBusBytes) throws(DBusError) -> UnixFD {
        guard data.count <= 65536 else { throw .invalidArgs("data: at most 65536 bytes fit a pipe") }
        var ends: [Int32] = [-1, -1]
        guard Glibc.pipe(&ends) == 0 else { throw .failed("pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let reader = UnixFD(taking: ends[0]), writer = UnixFD(taking: ends[1])
        let written = data.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        writer.close()
        guard written == data.count else { throw .failed("pipe: short write") }
        return reader
    }
}
