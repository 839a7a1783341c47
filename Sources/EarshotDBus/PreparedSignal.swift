import CDBus

/// A signal sent again and again with the same header: one path, interface, member and
/// destination, one signature (e.g. a stream of audio chunks to their owner).
///
/// The names and the signature are checked, and libdbus builds the header, once. Each
/// `send` copies that header (`dbus_message_copy`), appends only the arguments and sends;
/// a signal sent this way is the same on the wire as one from `emitSignal`.
public final class PreparedSignal: Sendable {
    public let connection: DBusConnection
    public let path: ObjectPath
    public let interface: String
    public let member: String
    public let destination: String?
    /// The argument types every `send` must match.
    public let signature: [DBusType]
    private let header: HeaderTemplate

    public init(connection: DBusConnection, path: ObjectPath, interface: String, member: String,
                signature: [DBusType], destination: String? = nil) throws(DBusError) {
        let text = signatureString(signature)
        guard text.utf8.count <= 255 else {
            throw .invalidArgs("signature '\(text)' is \(text.utf8.count) bytes long, the limit is 255")
        }
        // Encoding an empty signal checks the names and builds the header.
        let message = DBusMessage.signal(path: path, interface: interface, member: member, body: [], destination: destination)
        header = HeaderTemplate(pointer: try message.encode())
        self.connection = connection
        self.path = path
        self.interface = interface
        self.member = member
        self.destination = destination
        self.signature = signature
    }

    /// Sends the signal with `arguments` (of exactly `signature`'s types); returns its serial.
    @discardableResult
    public func send(_ arguments: [DBusValue]) throws(DBusError) -> UInt32 {
        guard arguments.count == signature.count, zip(arguments, signature).allSatisfy({ $0.type == $1 }) else {
            throw .invalidArgs("\(interface).\(member) has signature '\(signatureString(signature))', given '\(signatureString(arguments.map(\.type)))'")
        }
        try MessageCodec.validateValues(arguments)
        guard let message = dbus_message_copy(header.pointer) else { throw .noMemory("out of memory copying a signal header") }
        defer { dbus_message_unref(message) }
        try MessageCodec.append(arguments, to: message)
        return try connection.sendEncoded(message)
    }
}

/// The header-only message a `PreparedSignal` copies from.
///
/// `@unchecked Sendable` is sound because the message is complete when the wrapper is made
/// and nothing changes it afterwards: it is never sent (so never locked or given a serial)
/// nor appended to, and `dbus_message_copy`, its only use, reads the header and body
/// strings without writing to the source (libdbus is thread-safe for that once
/// `dbus_threads_init_default()` has run, which opening any connection does).
private final class HeaderTemplate: @unchecked Sendable {
    let pointer: OpaquePointer

    init(pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        dbus_message_unref(pointer)
    }
}
