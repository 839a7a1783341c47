import CSndFileLoader
import EarshotSync

/// Opens libsndfile handles so that a failure's message is the failure's own.
///
/// libsndfile keeps the error of a failed open in a process-wide variable, read back with
/// `sf_strerror(nil)`. Opening and reading that message under one lock keeps the message
/// with its own open for every open this module makes (other modules' opens may still
/// overwrite it, which can only garble a message, never the outcome).
enum LibsndfileOpen {
    private static let lock = ThreadLock()

    /// Runs `open` (an `sf_open…` call) and returns its handle, or libsndfile's message.
    static func run(_ open: () -> OpaquePointer?) -> Result<OpaquePointer, LibsndfileMessage> {
        lock.withLock {
            if let handle = open() { return .success(handle) }
            return .failure(LibsndfileMessage(text: String(cString: earshot_sf_strerror(nil))))
        }
    }
}

/// libsndfile's explanation of a failure.
struct LibsndfileMessage: Error {
    let text: String
}
