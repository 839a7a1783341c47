import CEchoClient

/// The C libdbus client (Sources/CEchoClient): a private connection used from one task,
/// one blocking call at a time.
final class CEchoPeer {
    private var handle: OpaquePointer?
    let uniqueName: String

    init(address: String) throws {
        var buffer = [CChar](repeating: 0, count: 1024)
        let opened = earshot_c_connect(address, &buffer, buffer.count)
        guard let opened else {
            throw BenchmarkError("C client: " + buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        handle = opened
        uniqueName = String(cString: earshot_c_unique_name(opened))
    }

    static var libdbusVersion: String { String(cString: earshot_c_libdbus_version()) }

    /// The C call itself, for the timed loop: returns the reply length or -1.
    @inline(__always)
    func echoBytes(_ base: UnsafePointer<UInt8>, _ count: Int32) -> Int32 {
        earshot_c_echo_bytes(handle, base, count)
    }

    /// Receives `count` unicast `Bytes` signals of `size` bytes; returns how many arrived or -1.
    func receiveSignals(count: UInt32, size: UInt32) -> Int {
        earshot_c_receive_signals(handle, count, size)
    }

    /// Reads a `u` property (Properties.Get), as a typed client's read does: the value or -1.
    @inline(__always)
    func uint32Property(_ destination: String, _ path: String, _ interface: String, _ property: String) -> Int64 {
        earshot_c_get_uint32(handle, destination, path, interface, property)
    }

    var lastError: String { String(cString: earshot_c_last_error(handle)) }

    func close() {
        earshot_c_close(handle)
        handle = nil
    }

    deinit { close() }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
