import PieceStore
import PostgresNIO

/// What an error from the database means for the call that met it.
enum PostgresFailure {
    /// The server is gone or going: the call changed nothing and fails as
    /// `StorageUnavailable`.
    case unavailable(String)
    /// A conflict with another host's transaction (a deadlock, a serialization failure, an
    /// object deleted under a new reference, a lock not had within `lock_timeout`, as when
    /// the host holding it went silent and the server has yet to end its session): running
    /// the transaction again succeeds.
    case conflict
    /// The server's disk is full.
    case noSpace(String)
    /// Anything else (a bug, or a schema this version does not know).
    case other

    init(_ error: any Error) {
        if error is ConnectionLost {
            self = .unavailable("the server closed the connection")
            return
        }
        if let error = error as? StatementTimedOut {
            self = .unavailable(error.description)
            return
        }
        guard let error = error as? PSQLError else {
            // Not the database's: the caller's own error (a rule, the local files).
            self = .other
            return
        }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = error.serverInfo?[.message] ?? "\(error)"
            if state.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300"].contains(state) {
                self = .unavailable(message)
            } else if ["40001", "40P01", "23503", "55P03"].contains(state) {
                self = .conflict
            } else if state == "53100" {
                self = .noSpace(message)
            } else {
                self = .other
            }
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed,
             .sslUnsupported, .failedToAddSSLHandler:
            self = .unavailable(error.underlying.map { Self.plainly("\($0)") } ?? "the connection closed")
        default:
            self = .other
        }
    }

    /// A TLS library's error as what it means for the catalogue's TLS (`TLSRefused: …`);
    /// any other text as it is.
    static func plainly(_ text: String) -> String {
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "TLSRefused: the server's certificate is not signed by an authority of sslrootcert (or the system's)"
        }
        if text.contains("failedToValidateHostname") {
            return "TLSRefused: the server's certificate does not name the host the URL gives (sslmode=verify-full)"
        }
        if text.contains("sslUnsupported") || text.contains("SSL_UNSUPPORTED") {
            return "TLSRefused: the server does not take TLS connections"
        }
        return text
    }

    /// Whether the connection that met this error may be used again.
    var connectionReusable: Bool {
        switch self {
        case .unavailable: false
        case .conflict, .noSpace, .other: true
        }
    }

    /// The error as the service reports it, for a catalogue at `location`.
    func reported(_ error: any Error, location: String) -> any Error {
        switch self {
        case .unavailable(let reason): StorageUnavailable("the shared catalogue at \(location) is unreachable: \(reason)")
        case .noSpace(let message): OutOfSpace("the shared catalogue at \(location) is out of space: \(message)")
        case .conflict, .other:
            if let error = error as? PSQLError, let message = error.serverInfo?[.message] {
                StoreFailure("the shared catalogue at \(location) failed: \(message)")
            } else {
                error
            }
        }
    }
}
