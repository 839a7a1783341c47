/// A method call being served: the message, the connection it came on, and typed access to
/// its arguments (already checked against the declared signature).
public struct MethodCall: Sendable {
    public let message: DBusMessage
    public let connection: DBusConnection
    /// The exported object the call is addressed to.
    public let object: ExportedObject
    let hooks = ReplyHooks()

    /// Runs `action` once the reply (or error) to this call has been sent, e.g. to start
    /// emitting signals on an object whose path the reply carries.
    public func afterReply(_ action: @escaping @Sendable () -> Void) {
        hooks.actions.withLock { $0.append(action) }
    }

    public var arguments: [DBusValue] { message.body }
    /// The caller's unique name.
    public var sender: String { message.sender ?? "" }
    public var path: ObjectPath { object.path }

    /// The caller's uid and user name (asked of the bus once per caller, then cached).
    public func caller() async throws -> CallerIdentity {
        try await connection.callerIdentity(sender)
    }

    public func argument(_ index: Int) throws(DBusError) -> DBusValue {
        guard index < arguments.count else {
            throw .invalidArgs("\(message.member ?? "call"): argument \(index) is missing")
        }
        return arguments[index]
    }

    private func mismatch(_ index: Int, _ wanted: String) -> DBusError {
        let got = index < arguments.count ? arguments[index].type.signature : "nothing"
        return .invalidArgs("\(message.member ?? "call"): argument \(index) is \(got), wanted \(wanted)")
    }

    public func string(_ index: Int) throws(DBusError) -> String {
        guard let v = try argument(index).stringValue else { throw mismatch(index, "s") }
        return v
    }

    public func uint32(_ index: Int) throws(DBusError) -> UInt32 {
        guard let v = try argument(index).uint32Value else { throw mismatch(index, "u") }
        return v
    }

    public func uint64(_ index: Int) throws(DBusError) -> UInt64 {
        guard let v = try argument(index).uint64Value else { throw mismatch(index, "t") }
        return v
    }

    public func bool(_ index: Int) throws(DBusError) -> Bool {
        guard let v = try argument(index).boolValue else { throw mismatch(index, "b") }
        return v
    }

    public func bytes(_ index: Int) throws(DBusError) -> DBusBytes {
        guard let v = try argument(index).bytesValue else { throw mismatch(index, "ay") }
        return v
    }

    public func fd(_ index: Int) throws(DBusError) -> UnixFD {
        guard let v = try argument(index).unixFDValue else { throw mismatch(index, "h") }
        return v
    }
}

/// Actions to run after a call's reply has gone out.
final class ReplyHooks: Sendable {
    let actions = Locked<[@Sendable () -> Void]>([])

    func run() {
        for action in actions.withLock({ list in defer { list.removeAll() }; return list }) { action() }
    }
}
