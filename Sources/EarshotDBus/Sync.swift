// `Locked` and `ThreadLock` are part of what every user of the binding works with (the
// binding's own state and the services' state alike), so importing EarshotDBus brings them.
@_exported import EarshotSync
