import CDBus

/// A signal sent again and again with the same header: one path, interface, member and
/// destination, one signature (e.g. a stream of audio chunks to their owner).
///
/// The names and the signature are checked, and libdbus builds the header, once. Each
/// `send` copies that header (`dbus_message_copy`), appends only the arguments and sends;
/// a signal sent this way is the same on the wire as one from `emitSignal`.
///
/// Arguments of only fixed-size values and byte arrays (such as `ay t t`) are marshalled
/// once per shape: the last such message is kept, and a send whose byte arrays have the same
/// lengths copies it whole and writes the new values over the old (`FixedBodyLayout`), with
/// none of libdbus's appending (which rewrites the header's signature for every argument).
public final class PreparedSignal: Sendable {
    public let connection: DBusConnection
    public let path: ObjectPath
    public let interface: String
    public let member: String
    public let destination: String?
    /// The argument types every `send` must match.
    public let signature: [DBusType]
    private let header: HeaderTemplate
    /// The last message built afresh whose arguments have a `FixedBodyLayout`, to be copied.
    private let lastFixed = Locked<FixedBodyTemplate?>(nil)

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
        // Fixed-size values and byte arrays need no checking beyond their types.
        if let template = lastFixed.withLock({ $0 }), template.layout.fits(arguments) {
            guard let message = dbus_message_copy(template.pointer) else { throw .noMemory("out of memory copying a signal") }
            defer { dbus_message_unref(message) }
            // (A copy always has its original's layout; were it ever not so, the signal is
            // built afresh below.)
            if let body = template.layout.body(of: message) {
                template.layout.write(arguments, into: body)
                return try connection.sendEncoded(message)
            }
        }
        try MessageCodec.validateValues(arguments)
        guard let message = dbus_message_copy(header.pointer) else { throw .noMemory("out of memory copying a signal header") }
        defer { dbus_message_unref(message) }
        try MessageCodec.append(arguments, to: message)
        if let layout = FixedBodyLayout(arguments), layout.describes(message), let kept = dbus_message_copy(message) {
            lastFixed.withLock { $0 = FixedBodyTemplate(pointer: kept, layout: layout) }
        }
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

/// A message kept by a `PreparedSignal` to be copied and written over.
///
/// `@unchecked Sendable` is sound for the reason `HeaderTemplate`'s is: the message is
/// complete when the wrapper is made, never sent, appended to or written over itself (only
/// its copies are), and `dbus_message_copy` only reads it.
private final class FixedBodyTemplate: @unchecked Sendable {
    let pointer: OpaquePointer
    let layout: FixedBodyLayout

    init(pointer: OpaquePointer, layout: FixedBodyLayout) {
        self.pointer = pointer
        self.layout = layout
    }

    deinit {
        dbus_message_unref(pointer)
    }
}
