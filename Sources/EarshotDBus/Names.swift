import CDBus
import Glibc

/// Validation of the names that appear in message headers, through libdbus's own
/// validators (which report instead of aborting, unlike the setters they protect).
public enum DBusNames {
    private static func run(_ what: String, _ name: String,
                            _ validator: (UnsafePointer<CChar>?, UnsafeMutablePointer<CDBus.DBusError>?) -> dbus_bool_t) throws(EarshotDBus.DBusError) {
        // A name is checked on its C string, with no error object (libdbus's validators
        // accept nil) and no Swift scan for NUL: one inside ends the C string early, so strlen
        // falls short of the UTF-8 count. Only a refused name is looked at again, for what
        // was wrong with it.
        let (whole, valid) = name.withCString { cName in
            let whole = strlen(cName) == name.utf8.count
            return (whole, whole && validator(cName, nil) != 0)
        }
        if valid { return }
        guard whole else { throw .invalidArgs("\(what) contains a NUL character") }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        _ = name.withCString { validator($0, &error) }
        let why = error.message.map { String(cString: $0) } ?? "invalid"
        throw .invalidArgs("'\(name)' is not a valid \(what): \(why)")
    }

    public static func validateInterface(_ name: String) throws(EarshotDBus.DBusError) {
        try run("interface name", name, dbus_validate_interface)
    }

    public static func validateMember(_ name: String) throws(EarshotDBus.DBusError) {
        try run("member name", name, dbus_validate_member)
    }

    public static func validateErrorName(_ name: String) throws(EarshotDBus.DBusError) {
        try run("error name", name, dbus_validate_error_name)
    }

    public static func validateBusName(_ name: String) throws(EarshotDBus.DBusError) {
        try run("bus name", name, dbus_validate_bus_name)
    }

    public static func isValidBusName(_ name: String) -> Bool {
        (try? validateBusName(name)) != nil
    }

    /// Unique connection names start with ':'.
    public static func isUniqueName(_ name: String) -> Bool { name.hasPrefix(":") }
}
