import Foundation
import Glibc

/// The piece store has no more room: its file system is full, a quota is used up, or a
/// file-size limit is reached. `description` says what could not be stored and why.
public struct OutOfSpace: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Room on the piece store's file system.
public enum StorageSpace {
    /// Free space that drops and transcodes leave untouched, so that the database can
    /// always record a deletion (which is how room is made again) on an otherwise full store.
    public static let reservedBytes: UInt64 = 1 << 20

    /// Whether `code` (an errno value) means there is no more room: `ENOSPC`, `EDQUOT`, or
    /// `EFBIG` (a file-size limit such as `RLIMIT_FSIZE`).
    public static func isExhaustion(_ code: Int32) -> Bool {
        code == ENOSPC || code == EDQUOT || code == EFBIG
    }

    /// The system's words for one of those errors when `message` quotes them, as libsndfile
    /// and FFmpeg do when a write fails ("No space left on device"); nil otherwise.
    public static func exhaustion(quotedIn message: String) -> String? {
        [ENOSPC, EDQUOT, EFBIG].lazy.map { String(cString: strerror($0)) }.first { message.contains($0) }
    }

    /// Bytes an unprivileged writer may still use on the file system holding `path`; nil
    /// when it cannot be told.
    public static func availableBytes(at path: String) -> UInt64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return UInt64(info.f_bavail) * UInt64(info.f_frsize)
    }

    /// "1.5 MiB", "12 KiB", "300 B".
    static func describe(_ bytes: UInt64) -> String {
        if bytes >= 1 << 20 { return String(format: "%.1f MiB", Double(bytes) / Double(1 << 20)) }
        if bytes >= 1 << 10 { return "\(bytes >> 10) KiB" }
        return "\(bytes) B"
    }
}
