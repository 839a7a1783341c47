import CALSA
import EarshotSync
import Glibc

/// Collects the messages libasound reports (its `SNDERR` / `SYSERR` lines) while a body runs
/// on the current thread, instead of letting them go to stderr, so that errors can quote
/// them ("Unknown PCM nosuch").
///
/// Uses `snd_lib_error_set_local`, libasound's per-thread error handler, and a pthread key
/// to find the current thread's collector from the C callback.
enum ALSADiagnostics {
    /// The key under which a thread's active collector is stored.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key, nil)
        precondition(result == 0, "pthread_key_create failed: \(result)")
        return key
    }()

    /// The messages one `collecting` call has received.
    private final class Collector {
        var messages: [String] = []
    }

    /// Runs `body`, returning its result and the libasound messages reported meanwhile on
    /// this thread (oldest first).
    static func collecting<Result>(_ body: () -> Result) -> (Result, [String]) {
        let collector = Collector()
        let previousCollector = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(collector).toOpaque())
        let previousHandler = snd_lib_error_set_local { _, _, _, err, format, arguments in
            guard let format, let arguments, let raw = pthread_getspecific(ALSADiagnostics.key) else { return }
            let collector = Unmanaged<ALSADiagnostics.Collector>.fromOpaque(raw).takeUnretainedValue()
            var buffer = [CChar](repeating: 0, count: 512)
            let length = buffer.withUnsafeMutableBufferPointer { chars in
                vsnprintf(chars.baseAddress, chars.count, format, arguments)
            }
            guard length >= 0 else { return }
            var text = String(nulTerminated: buffer)
            while text.hasSuffix("\n") { text.removeLast() }
            if err != 0 { text += ": " + alsaMessage(err > 0 ? -err : err) }
            if !text.isEmpty { collector.messages.append(text) }
        }
        let result = withExtendedLifetime(collector) { body() }
        snd_lib_error_set_local(previousHandler)
        pthread_setspecific(key, previousCollector)
        return (result, collector.messages)
    }

    /// `snd_strerror(code)`, followed by libasound's own messages in parentheses when there
    /// are any: "No such file or directory (Unknown PCM nosuch)".
    static func message(_ code: Int32, details: [String]) -> String {
        let base = alsaMessage(code)
        guard !details.isEmpty else { return base }
        return base + " (" + details.joined(separator: "; ") + ")"
    }
}
