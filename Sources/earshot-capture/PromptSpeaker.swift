import EarshotContract
import ContractCore
import EarshotDBus
import Logging

/// Speaks a pass-thru's `InitialPrompt` through `org.earshot.Alerts1.Speak` and waits
/// for the alert's `Completed`. Returns whether it was spoken: false when the alert
/// service is absent, refuses, fails or takes too long. `ends` hears when the speech will
/// end (`EndsAtMonotonicUs` of its alert object, µs) once the alert service knows.
enum PromptSpeaker {
    static let busName = AlertsContract.busName
    static let path = ObjectPath(declared: AlertsContract.managerPath)
    static let alertInterface = AlertsContract.Alert.interface.name
    static let endsAt = AlertsContract.Alert.endsAtMonotonicUs.name

    static func speak(_ chunks: [SpeechChunk], on connection: DBusConnection, logger: Logger,
                      limit: Duration = .seconds(120), ends: @escaping @Sendable (UInt64) -> Void = { _ in }) async -> Bool {
        do {
            // Subscribe first: a short prompt may complete before the reply is read.
            let completions = try await connection.subscribe(MatchRule(sender: busName, interface: alertInterface,
                                                                       member: AlertsContract.Alert.completed.name))
            defer { completions.cancel() }
            let changes = try await connection.subscribe(MatchRule(sender: busName, interface: "org.freedesktop.DBus.Properties",
                                                                   member: "PropertiesChanged"))
            defer { changes.cancel() }
            let speech = Locked<ObjectPath?>(nil)
            let following = Task {
                for await change in changes {
                    guard let path = change.path, path == speech.withLock({ $0 }), change.body.first?.stringValue == alertInterface,
                          let end = change.body.dropFirst().first?.stringKeyedValue?[endsAt]?.uint64Value, end > 0 else { continue }
                    ends(end)
                    return
                }
            }
            defer { following.cancel() }
            let audio = DBusValue.array(.structure([.string, .string]),
                                        chunks.map { .structure([.string($0.kind.rawValue), .string($0.text)]) })
            let reply = try await connection.call(destination: busName, path: path, interface: AlertsContract.Manager.interface.name,
                                                  member: AlertsContract.Manager.speak.name,
                                                  [audio, .vardict([:])], timeout: .seconds(5))
            guard let alert = reply.first?.objectPathValue else { return false }
            speech.withLock { $0 = alert }
            // A change sent before the reply named the alert was passed over: read it.
            if let end = try? await connection.call(destination: busName, path: alert, interface: "org.freedesktop.DBus.Properties",
                                                    member: "Get", [.string(alertInterface), .string(endsAt)])
                .first?.variantValue?.uint64Value, end > 0 {
                ends(end)
            }
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
