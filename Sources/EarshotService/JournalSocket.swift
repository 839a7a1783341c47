import Glibc

/// journald's native protocol: one datagram per entry on `/run/systemd/journal/socket`,
/// each field a `NAME=value` line (a value holding a newline is sent with its length), so
/// that an entry keeps its fields (`CODE_FUNC`, `EARSHOT_PASSTHRU`, …) as fields.
enum JournalSocket {
    static let path = "/run/systemd/journal/socket"

    /// The datagram socket, made on first use; -1 when none could be made.
    private static let socketFD: Int32 = {
        socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }()

    /// A field name as journald takes it: upper-case letters, digits and `_`, not starting
    /// with `_` or a digit.
    static func fieldName(_ key: String) -> String {
        var name = String(key.uppercased().map { $0.isLetter && $0.isASCII || $0.isNumber && $0.isASCII ? $0 : "_" })
        while name.hasPrefix("_") { name.removeFirst() }
        if name.first?.isNumber ?? true { name = "F" + name }
        return String(name.prefix(64))
    }

    /// The entry's datagram.
    static func datagram(_ fields: [(String, String)]) -> [UInt8] {
        var bytes: [UInt8] = []
        for (name, value) in fields {
            bytes += Array(name.utf8)
            if value.contains("\n") {
                let data = Array(value.utf8)
                bytes.append(0x0a)
                withUnsafeBytes(of: UInt64(data.count).littleEndian) { bytes += $0 }
                bytes += data
            } else {
                bytes.append(UInt8(ascii: "="))
                bytes += Array(value.utf8)
            }
            bytes.append(0x0a)
        }
        return bytes
    }

    /// Sends one entry; false when the journal did not take it (the caller then writes
    /// the line to stderr instead).
    static func send(_ fields: [(String, String)]) -> Bool {
        guard socketFD >= 0 else { return false }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in buffer.copyBytes(from: Array(path.utf8)) }
        let bytes = datagram(fields)
        let sent = bytes.withUnsafeBytes { data in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(socketFD, data.baseAddress, data.count, Int32(MSG_NOSIGNAL), $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
        return sent == bytes.count
    }
}
