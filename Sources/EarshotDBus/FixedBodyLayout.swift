import CDBus
import Glibc

/// Where each argument of a message body made only of fixed-size values and byte arrays
/// lies in the D-Bus wire format, for writing a new body of the same shape over a copy of an
/// old one instead of marshalling it afresh.
///
/// Offsets count from the body's start, which the wire format aligns to 8 bytes, so each
/// value's alignment within the body is its alignment in the message. A shape is the
/// arguments' types and, for byte arrays, their lengths: two bodies of one shape differ only
/// in the bytes at these offsets.
struct FixedBodyLayout: Sendable, Equatable {
    enum Slot: Sendable, Equatable {
        /// A fixed-size value of `size` bytes at `offset` (a boolean takes 4).
        case scalar(offset: Int, size: Int)
        /// A byte array: its 4-byte length at `offset`, then `count` bytes.
        case bytes(offset: Int, count: Int)
    }

    let slots: [Slot]
    /// The index of the first byte array, whose bytes libdbus can point to in a message.
    let anchor: Int
    /// The body's length in bytes.
    let length: Int

    /// The layout of `values`, or nil when one is of a type whose size depends on its value
    /// (strings, paths, signatures, variants, containers other than byte arrays), is a file
    /// descriptor, or when no byte array holds at least one byte to anchor the layout to.
    init?(_ values: [DBusValue]) {
        var slots: [Slot] = []
        slots.reserveCapacity(values.count)
        var offset = 0
        var anchor: Int?
        for (index, value) in values.enumerated() {
            guard let size = Self.scalarSize(value) else {
                guard case .bytes(let bytes) = value else { return nil }
                offset = Self.align(offset, 4)
                slots.append(.bytes(offset: offset, count: bytes.count))
                if anchor == nil, !bytes.isEmpty { anchor = index }
                offset += 4 + bytes.count
                continue
            }
            offset = Self.align(offset, size)
            slots.append(.scalar(offset: offset, size: size))
            offset += size
        }
        guard let anchor else { return nil }
        self.slots = slots
        self.anchor = anchor
        length = offset
    }

    /// Whether `values` (already known to have this layout's types) have this shape: the
    /// same byte array lengths. Allocates nothing.
    func fits(_ values: [DBusValue]) -> Bool {
        guard values.count == slots.count else { return false }
        for (slot, value) in zip(slots, values) {
            switch (slot, value) {
            case (.scalar, _):
                if Self.scalarSize(value) == nil { return false }
            case let (.bytes(_, count), .bytes(bytes)):
                if bytes.count != count { return false }
            default:
                return false
            }
        }
        return true
    }

    /// The offset of the anchoring byte array's first byte.
    var anchorDataOffset: Int {
        guard case .bytes(let offset, _) = slots[anchor] else { preconditionFailure("the anchor is a byte array") }
        return offset + 4
    }

    /// Writes `values` (which `fit`) over a body of this layout starting at `body`, in the
    /// host's byte order (that of every message this process builds).
    func write(_ values: [DBusValue], into body: UnsafeMutableRawPointer) {
        for (slot, value) in zip(slots, values) {
            switch (slot, value) {
            case let (.scalar(offset, _), .byte(v)): body.storeBytes(of: v, toByteOffset: offset, as: UInt8.self)
            case let (.scalar(offset, _), .boolean(v)): body.storeBytes(of: v ? 1 : 0, toByteOffset: offset, as: UInt32.self)
            case let (.scalar(offset, _), .int16(v)): body.storeBytes(of: v, toByteOffset: offset, as: Int16.self)
            case let (.scalar(offset, _), .uint16(v)): body.storeBytes(of: v, toByteOffset: offset, as: UInt16.self)
            case let (.scalar(offset, _), .int32(v)): body.storeBytes(of: v, toByteOffset: offset, as: Int32.self)
            case let (.scalar(offset, _), .uint32(v)): body.storeBytes(of: v, toByteOffset: offset, as: UInt32.self)
            case let (.scalar(offset, _), .int64(v)): body.storeBytes(of: v, toByteOffset: offset, as: Int64.self)
            case let (.scalar(offset, _), .uint64(v)): body.storeBytes(of: v, toByteOffset: offset, as: UInt64.self)
            case let (.scalar(offset, _), .double(v)): body.storeBytes(of: v, toByteOffset: offset, as: Double.self)
            case let (.bytes(offset, count), .bytes(bytes)):
                body.storeBytes(of: UInt32(count), toByteOffset: offset, as: UInt32.self)
                bytes.withUnsafeBytes { source in
                    if let base = source.baseAddress { (body + offset + 4).copyMemory(from: base, byteCount: count) }
                }
            default:
                preconditionFailure("values that do not fit the layout")
            }
        }
    }

    /// The wire size (and alignment) of a fixed-size value; nil for any other.
    private static func scalarSize(_ value: DBusValue) -> Int? {
        switch value {
        case .byte: 1
        case .int16, .uint16: 2
        case .boolean, .int32, .uint32: 4
        case .int64, .uint64, .double: 8
        default: nil
        }
    }

    private static func align(_ offset: Int, _ alignment: Int) -> Int {
        (offset + alignment - 1) / alignment * alignment
    }
}

// MARK: - In a message

extension FixedBodyLayout {
    /// The start of `message`'s body, found through the anchoring byte array; nil unless
    /// that array is where and as long as laid out. (A copy of a message this layout
    /// `describes` needs no more checking than that.)
    ///
    /// Writing there changes what is sent: libdbus keeps a message's body as its wire bytes,
    /// in a buffer of the message's own (a `dbus_message_copy` gets one of its own), caches
    /// nothing else about them, and `dbus_message_iter_get_fixed_array` points into that
    /// buffer. A message must not be written over once sent (libdbus then owns it too).
    func body(of message: OpaquePointer) -> UnsafeMutableRawPointer? {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return nil }
        for _ in 0 ..< anchor {
            guard dbus_message_iter_next(&iter) != 0 else { return nil }
        }
        guard case .bytes(_, let count) = slots[anchor], let data = Self.byteArray(at: &iter), data.count == count,
              let base = data.base else { return nil }
        let body = UnsafeMutableRawPointer(mutating: base) - anchorDataOffset
        // The wire format aligns a body to 8 bytes, and so does libdbus's buffer.
        return Int(bitPattern: body) % 8 == 0 ? body : nil
    }

    /// Whether every argument of `message` is where this layout puts it, as libdbus reads
    /// it, and there are no others.
    func describes(_ message: OpaquePointer) -> Bool {
        guard let body = body(of: message) else { return false }
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return false }
        for (index, slot) in slots.enumerated() {
            if index > 0 { guard dbus_message_iter_next(&iter) != 0 else { return false } }
            switch slot {
            case let .scalar(offset, size):
                guard dbus_message_iter_get_arg_type(&iter) != EARSHOT_DBUS_TYPE_ARRAY else { return false }
                var value: UInt64 = 0
                withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iter, $0) }
                // `value` holds the value in its first `size` bytes, as the body does.
                let same = withUnsafeBytes(of: &value) { read in memcmp(read.baseAddress!, body + offset, size) == 0 }
                guard same else { return false }
            case let .bytes(offset, count):
                guard let data = Self.byteArray(at: &iter), data.count == count,
                      body.load(fromByteOffset: offset, as: UInt32.self) == UInt32(count) else { return false }
                if count > 0, data.base != UnsafeRawPointer(body + offset + 4) { return false }
            }
        }
        return dbus_message_iter_next(&iter) == 0
    }

    /// The byte array at `iter`: where libdbus holds its bytes, and how many; nil for any
    /// other argument.
    private static func byteArray(at iter: inout DBusMessageIter) -> (base: UnsafeRawPointer?, count: Int)? {
        guard dbus_message_iter_get_arg_type(&iter) == EARSHOT_DBUS_TYPE_ARRAY,
              dbus_message_iter_get_element_type(&iter) == EARSHOT_DBUS_TYPE_BYTE else { return nil }
        var elements = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &elements)
        var base: UnsafeMutablePointer<UInt8>? = nil
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(&elements, &base, &count)
        return (base.map { UnsafeRawPointer($0) }, Int(count))
    }
}
