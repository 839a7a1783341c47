import EarshotSync
import Glibc

/// FFmpeg's AAC encoder (`aac_m4a_encoder.c` in CAACEncoder), built as the plugin
/// `libEarshotAACEncoder.so` and loaded at the first AAC export.
///
/// libavcodec and libavformat bring dozens of libraries with them (codecs, TLS, image and
/// network libraries, about 10 MiB of a process's memory and a part of its start time);
/// a service that only exports AAC now and then maps them only once it does. The plugin
/// is looked for in `EARSHOT_PLUGIN_DIR` when that is set, else next to the executable,
/// then in `../lib/earshot` from it (where `deploy/install` puts it). Once loaded it stays.
enum AACEncoderPlugin {
    static let fileName = "libEarshotAACEncoder.so"

    /// `earshot_encode_aac_m4a(input, output, message, message_size)` (aac_m4a_encoder.h).
    typealias Encode = @convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int) -> Int32

    /// How `earshot_encode_aac_m4a` ended (`earshot_aac_status`).
    enum Status: Int32 {
        case ok = 0
        case invalidAudio = 1
        case io = 2
    }

    /// The entry point's address (as an integer, which is Sendable), or why there is none.
    private static let entry = Locked<Result<UInt, MediaError>?>(nil)

    /// The encoder, loading the plugin on first use; a failure is remembered.
    static func encoder() throws(MediaError) -> Encode {
        let found = entry.withLock { cached -> Result<UInt, MediaError> in
            if let cached { return cached }
            let loaded = load(from: searchDirectories)
            cached = loaded
            return loaded
        }
        let address = try found.get()
        return unsafeBitCast(UnsafeRawPointer(bitPattern: address)!, to: Encode.self)
    }

    /// The directories searched, in order.
    static var searchDirectories: [String] {
        if let configured = getenv("EARSHOT_PLUGIN_DIR") { return [String(cString: configured)] }
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

    /// Loads the plugin from the first of `directories` that holds it.
    static func load(from directories: [String]) -> Result<UInt, MediaError> {
        var tried: [String] = []
        for directory in directories {
            let path = directory + "/" + fileName
            guard access(path, F_OK) == 0 else {
                tried.append(path)
                continue
            }
            guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
                let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
                return .failure(.io("AAC encoding is unavailable: cannot load \(path): \(reason)"))
            }
            guard let symbol = dlsym(handle, "earshot_encode_aac_m4a") else {
                return .failure(.io("AAC encoding is unavailable: \(path) has no earshot_encode_aac_m4a"))
            }
            return .success(UInt(bitPattern: symbol))
        }
        return .failure(.io("AAC encoding is unavailable: \(fileName) is not installed (looked for "
                            + tried.joined(separator: ", ") + "; EARSHOT_PLUGIN_DIR names another directory)"))
    }
}
