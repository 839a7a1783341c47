import ContractCore
import EarshotDBus
import Logging

/// Speaks a pass-thru's `InitialPrompt` through `org.earshot.Alerts1.Speak` and waits
/// for the alert's `Completed`. Returns whether it was spoken: false when the alert
/// service is absent, refuses, fails or takes too long.
enum PromptSpeaker {
    static let busName = "org.earshot.Alerts1"
    static let path: ObjectPath = "/org/earshot/Alerts1"
    static let alertInterface = "org.earshot.Alerts1.Alert"

    static func speak(_ chunks: [SpeechChunk], on connection: DBusConnection, logger: Logger,
                      limit: Duration = .seconds(120)) async -> Bool {
        do {
            // Subscribe first: a short prompt may complete before the reply is read.
            let completions = try await connection.subscribe(MatchRule(sender: busName, interface: alertInterface, member: "Completed"))
            defer { completions.cancel() }
            let audio = DBusValue.array(.structure([.string, .string]),
                                        chunks.map { .structure([.string($0.kind.rawValue), .string($0.text)]) })
            let reply = try await connection.call(destination: busName, path: path, interface: busName, member: "Speak",
                                                  [audio, .vardict([:])], timeout: .seconds(5))
            guard let alert = reply.first?.objectPathValue else { return false }
            let deadline = ContinuousClock.now + limit
            while ContinuousClock.now < deadline {
                guard let signal = await completions.next(timeout: deadline - ContinuousClock.now) else { break }
                guard signal.path == alert else { continue }
                let spoken = signal.body.first?.boolValue ?? false
                if !spoken { logger.warning("the prompt was not spoken: \(signal.body.dropFirst().first?.stringValue ?? "?")") }
                return spoken
            }
            logger.warning("the prompt did not complete within \(limit)")
            return false
        } catch {
            logger.warning("the prompt could not be spoken: \(error)")
            return false
        }
    }
}
