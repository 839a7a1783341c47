import EarshotContract
import EarshotDBus

/// A request's keys checked before it is sent, by the same reader the service uses
/// (`DeclaredRequest`): unknown and missing keys, D-Bus types, ranges, allowed values and
/// lengths. Rules the contract states in words are left to the service.
enum RequestCheck {
    static func check(_ values: [String: DBusValue], against keys: [OptionKey]) throws(EarshotError) {
        do {
            _ = try DeclaredRequest(.vardict(values), keys: keys)
        } catch {
            throw EarshotError(name: error.name, message: error.message)
        }
    }
}
