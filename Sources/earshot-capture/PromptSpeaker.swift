import ContractCore
import EarshotClient
import EarshotDBus
import Logging

/// Speaks a pass-thru's `InitialPrompt` through the alert service (`Speak`) and waits for
/// it to complete. Returns whether it was spoken: false when the alert service is absent,
/// refuses, fails or takes too long. `ends` hears when the speech will end (its alert's
/// `EndsAtMonotonicUs`, µs) once the alert service knows. With `playedAudio`, a pipe's
/// writing end, the alert service writes what it plays there (`PlayedAudio`; this end is
/// closed here once handed over), and `started` hears when its first frame went out
/// (`StartedAtMonotonicUs`).
enum PromptSpeaker {
    static func speak(_ chunks: [SpeechChunk], on connection: DBusConnection, logger: Logger,
                      limit: Duration = .seconds(120), playedAudio: UnixFD? = nil,
                      started: @escaping @Sendable (UInt64) -> Void = { _ in },
                      ends: @escaping @Sendable (UInt64) -> Void = { _ in }) async -> Bool {
        do {
            let alerts = AlertsProxy(connection: connection, timeout: .seconds(5))
            let speech: PresentedAlert
            do {
                defer { playedAudio?.close() }
                speech = try await alerts.startSpeaking(chunks, options: SpeechOptions(playedAudio: playedAudio))
            }
            let startTimes = playedAudio == nil ? nil : try await speech.observe(.startedAtMonotonicUs)
            let starting = Task {
                guard let startTimes else { return }
                for await start in startTimes {
                    guard let start, start > 0 else { continue }
                    started(start)
                    return
                }
            }
            defer { starting.cancel() }
            // Read now and followed: an end announced before this subscription is read.
            let endTimes = try await speech.observe(.endsAtMonotonicUs)
            let following = Task {
                for await end in endTimes {
                    guard let end, end > 0 else { continue }
                    ends(end)
                    return
                }
            }
            defer { following.cancel() }
            // Whichever comes first: the speech's result, or the limit. (A task group would wait
            // for the result anyway: awaiting it does not end on cancellation.)
            let outcome = await withCheckedContinuation { (done: CheckedContinuation<Result<AlertResult, any Error>?, Never>) in
                let settled = Locked(false)
                let finish: @Sendable (Result<AlertResult, any Error>?) -> Void = { value in
                    if settled.withLock({ was in defer { was = true }; return !was }) { done.resume(returning: value) }
                }
                let timer = Task {
                    try? await Task.sleep(for: limit)
                    finish(nil)
                }
                Task {
                    do { finish(.success(try await speech.result)) } catch { finish(.failure(error)) }
                    timer.cancel()
                }
            }
            switch outcome {
            case nil:
                logger.warning("the prompt did not complete within \(limit)")
                return false
            case .failure(let error):
                logger.warning("the prompt's end was not heard: \(error)")
                return false
            case .success(let result):
                if !result.success { logger.warning("the prompt was not spoken: \(result.resultCode.rawValue)") }
                return result.success
            }
        } catch {
            logger.warning("the prompt could not be spoken: \(error)")
            return false
        }
    }
}
