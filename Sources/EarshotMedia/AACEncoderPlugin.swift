import EarshotSync
import Glibc

/// FFmpeg's AAC encoder (`aac_m4a_encoder.c` in Sources/Plugins), built as the plugin
/// `libEarshotAACEncoder.so` and loaded at the first AAC export (`PluginLibrary`).
///
/// libavcodec and libavformat bring dozens of libraries with them (codecs, TLS, image and
/// network libraries, about 10 MiB of a process's memory and a part of its start time);
/// a service that only exports AAC now and then maps them only once it does.
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

    /// The directories searched, in order (`PluginLibrary.searchDirectories`).
    static var searchDirectories: [String] { PluginLibrary.searchDirectories }

    /// Loads the plugin from the first of `directories` that holds it.
    static func load(from directories: [String]) -> Result<UInt, MediaError> {
        let feature = "AAC encoding"
        return PluginLibrary.load(fileName, feature: feature, from: directories)
            .flatMap { $0.function("earshot_encode_aac_m4a", feature: feature) }
            .mapError { MediaError.io($0.message) }
    }
}
