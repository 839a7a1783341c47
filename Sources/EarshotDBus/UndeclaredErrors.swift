import Glibc
import Logging

/// A method's handler may reply only with the errors its declaration names, or with
/// `org.freedesktop.DBus.Error.Failed` for an internal failure: a client reading the
/// introspection or the API pages must be able to trust that list.
///
/// Another error is refused: it is logged, and the caller gets `Failed` saying which error
/// was not declared. With `EARSHOT_UNDECLARED_ERRORS=abort` in the environment (the test
/// harness sets it for every service it starts) the process exits at once with status 70 (EX_SOFTWARE) instead, so that a test
/// reaching such a path fails loudly rather than passing on a changed error name.
enum UndeclaredErrors {
    /// Whether an undeclared error ends the process, read once.
    static let aborts: Bool = {
        guard let value = getenv("EARSHOT_UNDECLARED_ERRORS") else { return false }
        return String(cString: value) == "abort"
    }()

    /// `error` when `method` may reply with it, otherwise `Failed` naming it.
    static func checked(_ error: DBusError, method: DBusMethod, logger: Logger) -> DBusError {
        checked(error, member: method.name, declared: method.errors, logger: logger)
    }

    /// `error` when setting `property` may reply with it, otherwise `Failed` naming it.
    static func checked(_ error: DBusError, setting property: DBusProperty, logger: Logger) -> DBusError {
        checked(error, member: "Set \(property.name)", declared: property.setErrors, logger: logger)
    }

    private static func checked(_ error: DBusError, member: String, declared: Set<String>?, logger: Logger) -> DBusError {
        guard let declared, error.name != DBusError.prefix + "Failed", !declared.contains(error.name) else {
            return error
        }
        let report = "\(member) replied \(error.name), which it does not declare (\(error.message))"
        if aborts {
            // Written directly: the logger's handler may buffer, and the process ends now,
            // without a crash report whose length would push this line out of a test's view.
            let line = Array("earshot: undeclared error: \(report)\n".utf8)
            _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            _exit(70)
        }
        logger.error("undeclared error refused: \(report)")
        return .failed("internal error: \(report)")
    }
}
