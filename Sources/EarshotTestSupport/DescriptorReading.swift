import EarshotDBus
import Glibc
import Testing

/// Everything the descriptor in a reply's value gives, to its end.
public func readAll(_ value: DBusValue?) throws -> [UInt8] {
    let fd = try #require(value?.unixFDValue?.rawValue)
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    return bytes
}

/// Everything a descriptor gives (one EarshotClient handed over), to its end.
public func readAll(_ fd: UnixFD) throws -> [UInt8] { try readAll(.unixFD(fd)) }
