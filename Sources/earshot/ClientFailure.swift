import EarshotClient
import EarshotDBus
import Glibc

/// The exit statuses of `earshot`, one per kind of outcome.
enum ClientExit {
    /// The command did what was asked (for operations: `SUCCESS` or `WARNINGS`).
    static let success: Int32 = 0
    /// A D-Bus error reply, no bus, a file that cannot be read or written.
    static let failure: Int32 = 1
    /// The command line is wrong (argument-parser's own status).
    static let usage: Int32 = 2
    /// A service the command needs is not on the bus.
    static let notRunning: Int32 = 3
    /// The operation ran and ended with a result code other than `SUCCESS`/`WARNINGS`.
    static let unsuccessful: Int32 = 4
    /// A second Ctrl-C while the first was still being handled.
    static let interrupted: Int32 = 130

    /// The text every command's `--help` ends with.
    static let discussion = """
        Exit status: 0 success; 1 a D-Bus error reply or another failure (printed as \
        'earshot: <ErrorName>: <message>'); 2 a usage error; 3 a service the command needs is not \
        on the bus and the bus cannot start it ('earshot: org.earshot.X is not running'); 4 the \
        operation ended with a result \
        code other than SUCCESS or WARNINGS; 130 interrupted twice.
        """

    /// Whether an operation's result code counts as done (exit 0).
    static func isSuccessful(_ resultCode: String) -> Bool {
        resultCode == "SUCCESS" || resultCode == "WARNINGS"
    }
}

/// What can stop a command, each with its exit status and its line on stderr.
enum ClientFailure: Error, CustomStringConvertible {
    /// An error reply (or a failure of the binding, such as no bus).
    case dbus(DBusError)
    /// A service the command needs has no owner on the bus.
    case notRunning(String)
    /// Anything else: a file that cannot be opened, a reply of the wrong shape.
    case failed(String)

    var exitStatus: Int32 {
        switch self {
        case .dbus, .failed: ClientExit.failure
        case .notRunning: ClientExit.notRunning
        }
    }

    var description: String {
        switch self {
        case .dbus(let error): "\(error.name): \(error.message)"
        case .notRunning(let name): "\(name) is not running"
        case .failed(let message): message
        }
    }

    /// Any error as a failure: error replies naming a missing service become `notRunning`.
    static func from(_ error: any Error, service: String? = nil) -> ClientFailure {
        if let failure = error as? ClientFailure { return failure }
        if let error = error as? EarshotError {
            if let service, error.isServiceMissing { return .notRunning(service) }
            return .dbus(DBusError(name: error.name, message: error.message))
        }
        if let error = error as? DBusError {
            let missing = [DBusError.prefix + "ServiceUnknown", DBusError.prefix + "NameHasNoOwner"]
            if let service, missing.contains(error.name) { return .notRunning(service) }
            return .dbus(error)
        }
        return .failed(String(describing: error))
    }

    /// The failure from a C call that set `errno`.
    static func posix(_ what: String) -> ClientFailure {
        .failed("\(what): \(String(cString: strerror(errno)))")
    }

    /// Prints `earshot: …` on stderr and returns the exit status.
    func report() -> Int32 {
        Terminal.error("earshot: \(description)")
        return exitStatus
    }
}
