import Glibc

/// Why a media operation failed: what kind of failure, and a message saying what and why.
public struct MediaError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Not audio the contract accepts, or audio that cannot be decoded or encoded.
        case invalidAudio
        /// Not a PNG or JPEG, or a truncated or corrupt one.
        case invalidImage
        /// Reading or writing a file failed.
        case io
    }

    public let kind: Kind
    /// Human-readable: what failed and why.
    public let message: String

    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    static func invalidAudio(_ message: String) -> MediaError { MediaError(kind: .invalidAudio, message: message) }
    static func invalidImage(_ message: String) -> MediaError { MediaError(kind: .invalidImage, message: message) }
    static func io(_ message: String) -> MediaError { MediaError(kind: .io, message: message) }

    /// An `.io` error for a failed system call: "`what`: `strerror(code)`".
    static func system(_ what: String, code: Int32) -> MediaError {
        .io("\(what): \(String(cString: strerror(code)))")
    }
}
