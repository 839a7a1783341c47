import CSpaEchoCancel
import Foundation

/// PipeWire's echo canceller as its `module-echo-cancel` runs it by default: the SPA
/// plugin `aec/libspa-aec-webrtc.so` (libspa-0.2-modules; WebRTC's audio processing with
/// the plugin's defaults: extended filter, delay-agnostic, high-pass, high echo
/// suppression, high noise suppression, voice detection), given the microphone and what
/// plays, block by block at the same index, as the module does with no `buffer.play_delay`.
/// The module's graph (streams, resampling, drift) is not run: the peer gets the same files
/// as Earshot's canceller. Not used by any service.
final class PipeWireEchoPeer {
    /// Where PipeWire looks for it: `SPA_PLUGIN_DIR`, else Debian's directory.
    static var pluginPath: String {
        #if arch(arm64)
        let triplet = "aarch64-linux-gnu"
        #else
        let triplet = "x86_64-linux-gnu"
        #endif
        let directory = ProcessInfo.processInfo.environment["SPA_PLUGIN_DIR"] ?? "/usr/lib/\(triplet)/spa-0.2"
        return directory + "/aec/libspa-aec-webrtc.so"
    }

    private let canceller: OpaquePointer
    let block: Int

    init(rate: Int, path: String = PipeWireEchoPeer.pluginPath) throws {
        var error = [CChar](repeating: 0, count: 512)
        guard let opened = earshot_spa_aec_open(path, UInt32(rate), &error, error.count) else {
            throw BenchmarkError("PipeWire's echo canceller: " + error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        canceller = opened
        block = Int(earshot_spa_aec_block(opened))
    }

    deinit { earshot_spa_aec_close(canceller) }

    /// Processes whole blocks of `near` in place, paired with `far` at the same index
    /// (silence where `far` is shorter); a last part block passes through.
    func process(near: inout [Float], far: [Float]) throws {
        var played = [Float](repeating: 0, count: block), output = played
        for start in stride(from: 0, to: near.count - block + 1, by: block) {
            for index in 0 ..< block { played[index] = start + index < far.count ? far[start + index] : 0 }
            let result = near.withUnsafeBufferPointer { recorded in
                earshot_spa_aec_run(canceller, recorded.baseAddress! + start, played, &output, UInt32(block))
            }
            guard result >= 0 else { throw BenchmarkError("PipeWire's echo canceller failed a block (\(result))") }
            near.replaceSubrange(start ..< start + block, with: output)
        }
    }
}
