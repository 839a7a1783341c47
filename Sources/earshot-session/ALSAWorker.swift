import Dispatch

/// The one thread that does the session's ALSA and disk work, in order: scans, probes,
/// negotiations and state-file writes never run on the bus thread, and libasound's global
/// configuration is only ever touched from here.
final class ALSAWorker: Sendable {
    private let queue = DispatchQueue(label: "earshot-session.alsa")

    func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }
}
