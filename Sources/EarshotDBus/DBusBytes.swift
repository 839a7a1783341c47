import CDBus
import Glibc

/// The bytes of an `ay` value.
///
/// Built from an array, the value holds that array. Read from a received message, a block
/// of at least `DBusBytes.borrowedMinimum` bytes is not copied: the value keeps a reference
/// to the message and reads the block where libdbus holds it, for as long as any copy of
/// the value lives. Smaller blocks are copied, so that a few bytes never keep a large
/// message alive, and so are blocks from a message that carries file descriptors, so that
/// holding the bytes never keeps the message's descriptors open.
public struct DBusBytes: Sendable, RandomAccessCollection, Equatable, ExpressibleByArrayLiteral,
    CustomStringConvertible {
    /// Blocks this long or longer are read in place from a received message.
    public static let borrowedMinimum = 16 * 1024

    private enum Storage: Sendable {
        case owned([UInt8])
        case received(ReceivedBlock)
    }

    private let storage: Storage

    public init(_ bytes: [UInt8]) { storage = .owned(bytes) }

    public init(arrayLiteral elements: UInt8...) { storage = .owned(elements) }

    /// The `ay` at `iter` (its element iterator) in `message`, a received message.
    init(readingFrom iter: inout DBusMessageIter, in message: OpaquePointer) {
        var base: UnsafeMutablePointer<UInt8>? = nil
        var count: Int32 = 0
        dbus_message_iter_get_fixed_array(&iter, &base, &count)
        guard let base, count > 0 else {
            storage = .owned([])
            return
        }
        let block = UnsafeBufferPointer(start: UnsafePointer(base), count: Int(count))
        storage = block.count >= Self.borrowedMinimum && dbus_message_contains_unix_fds(message) == 0
            ? .received(ReceivedBlock(message: message, bytes: block))
            : .owned(Array(block))
    }

    /// Whether the bytes are read in place from a received message (tests, diagnostics).
    public var isBorrowedFromMessage: Bool {
        if case .received = storage { true } else { false }
    }

    /// The bytes as an array of their own: the array itself when built from one, a copy
    /// when read in place from a message.
    public var array: [UInt8] {
        switch storage {
        case .owned(let bytes): bytes
        case .received(let block): Array(block.bytes)
        }
    }

    /// Calls `body` with the bytes where they are.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        switch storage {
        case .owned(let bytes): return try bytes.withUnsafeBytes(body)
        case .received(let block): return try withExtendedLifetime(block) { try body(UnsafeRawBufferPointer(block.bytes)) }
        }
    }

    // MARK: RandomAccessCollection

    public var startIndex: Int { 0 }

    public var endIndex: Int {
        switch storage {
        case .owned(let bytes): bytes.count
        case .received(let block): block.bytes.count
        }
    }

    public subscript(position: Int) -> UInt8 {
        switch storage {
        case .owned(let bytes): bytes[position]
        case .received(let block): block.bytes[position]
        }
    }

    public func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        switch storage {
        case .owned(let bytes): return try bytes.withUnsafeBufferPointer(body)
        case .received(let block): return try withExtendedLifetime(block) { try body(block.bytes) }
        }
    }

    public static func == (lhs: DBusBytes, rhs: DBusBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { a in
            rhs.withUnsafeBytes { b in
                guard let x = a.baseAddress, let y = b.baseAddress else { return true }
                return memcmp(x, y, a.count) == 0
            }
        }
    }

    public var description: String { "\(count) bytes" }
}

/// A byte block inside a received message, and the reference that keeps the message alive.
///
/// @unchecked Sendable: both properties are immutable. The message is a received one, which
/// the binding only ever reads and libdbus does not change once it has handed it over; its
/// reference count is atomic (`dbus_message_ref`/`unref` may be called from any thread); and
/// `bytes` points into its body, which does not move or change while this reference is
/// held. So any thread may read `bytes` for as long as the block lives.
private final class ReceivedBlock: @unchecked Sendable {
    let message: OpaquePointer
    let bytes: UnsafeBufferPointer<UInt8>

    init(message: OpaquePointer, bytes: UnsafeBufferPointer<UInt8>) {
        dbus_message_ref(message)
        self.message = message
        self.bytes = bytes
    }

    deinit { dbus_message_unref(message) }
}
