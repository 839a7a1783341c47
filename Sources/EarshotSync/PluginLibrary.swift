import Glibc

/// A plugin of Earshot's own: a shared library of C functions that a service loads on
/// first use, so that the libraries it brings are mapped only by a process that needs
/// them. Plugins are looked for in `EARSHOT_PLUGIN_DIR` when that is set, else next to the
/// executable, then in `../lib/earshot` from it (where `deploy/install` puts them). Once
/// loaded a plugin stays loaded.
public struct PluginLibrary: Sendable {
    /// Where it was loaded from.
    public let path: String
    /// `dlopen`'s handle, as an integer (which is Sendable); never closed.
    private let handle: UInt

    /// Why a plugin or one of its functions is unavailable, in a sentence that names what
    /// was looked for and where.
    public struct Unavailable: Error, Sendable, Equatable {
        public let message: String
        public init(message: String) { self.message = message }
    }

    /// The directories searched, in order.
    public static var searchDirectories: [String] {
        if let configured = getenv("EARSHOT_PLUGIN_DIR") { return [String(cString: configured)] }
        return installedDirectories
    }

    /// Where Earshot's own plugins and helper programs are installed beside the running
    /// executable: its directory, then `../lib/earshot` from it.
    public static var installedDirectories: [String] {
        guard let executable = executableDirectory else { return [] }
        return [executable, executable + "/../lib/earshot"]
    }

    private static var executableDirectory: String? {
        var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &path, path.count - 1)
        guard length > 0 else { return nil }
        let full = String(nulTerminated: path[0 ..< length])
        guard let slash = full.lastIndex(of: "/") else { return nil }
        return String(full[..<slash])
    }

    /// Where `fileName` would be loaded from: the first of `directories` that holds it,
    /// found without loading it (nothing it brings is mapped).
    public static func locate(_ fileName: String, in directories: [String] = searchDirectories) -> String? {
        directories.lazy.map { $0 + "/" + fileName }.first { access($0, F_OK) == 0 }
    }

    /// Loads `fileName` from the first of `directories` that holds it. `feature` names what
    /// the plugin gives ("AAC encoding") for the error's message.
    public static func load(_ fileName: String, feature: String,
                            from directories: [String] = searchDirectories) -> Result<PluginLibrary, Unavailable> {
        guard let path = locate(fileName, in: directories) else {
            return .failure(Unavailable(message: "\(feature) is unavailable: \(fileName) is not installed (looked for "
                                        + directories.map { $0 + "/" + fileName }.joined(separator: ", ")
                                        + "; EARSHOT_PLUGIN_DIR names another directory)"))
        }
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            return .failure(Unavailable(message: "\(feature) is unavailable: cannot load \(path): \(reason)"))
        }
        return .success(PluginLibrary(path: path, handle: UInt(bitPattern: handle)))
    }

    /// The address of the function `name`, as an integer.
    public func function(_ name: String, feature: String) -> Result<UInt, Unavailable> {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: handle), name) else {
            return .failure(Unavailable(message: "\(feature) is unavailable: \(path) has no \(name)"))
        }
        return .success(UInt(bitPattern: symbol))
    }
}
