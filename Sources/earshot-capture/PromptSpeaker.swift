import ContractCore
import EarshotClient
import EarshotDBus
import Logging

/// Speaks a pass-thru's `InitialPrompt` through the alert service (`Speak`) and waits for
/// it to complete. Returns whether it was spoken: false when the alert service is absent,
/// refuses, fails or takes too long. `ends` hears when the speech will end (its alert's
/// `EndsAtMonotonicUs`, µs) once the alert service knows.
enum PromptSpeaker {
    static func speak(_ chunks: [SpeechChunk], on connection: DBusConnection, logger: Logger,
                      limit: Duration = .seconds(120), ends: @escaping @Sendable (UInt64) -> Void = { _ in }) async -> Bool {
        do {
            let alerts = AlertsProxy(connection: connection, timeout: .seconds(5))
            let speech = try await alerts.startSpeaking(chunks)
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
            let outcome = await withTaskGroup(of: Result<AlertResult, any Error>?.self) { group in
                group.addTask {
                    do { return .success(try await speech.result) } catch { return .failure(error) }
                }
                group.addTask {
                    try? await Task.sleep(for: limit)
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
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
