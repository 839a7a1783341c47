import CDBus

/// A libdbus connection pointer that may cross threads.
///
/// `@unchecked Sendable` is sound here because libdbus connections are thread-safe once
/// `dbus_threads_init_default()` has run (every connection is opened through
/// `DBusConnection.open`, which calls it first): libdbus guards each connection with its
/// own mutexes, and the pointer itself is immutable for the wrapper's lifetime.
struct RawConnection: @unchecked Sendable {
    let pointer: OpaquePointer
}

enum LibDBus {
    /// Makes libdbus thread-safe; idempotent and cheap after the first call.
    static func initThreads() {
        _ = dbus_threads_init_default()
    }
}
