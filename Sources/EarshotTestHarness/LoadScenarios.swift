import ContractCore
import EarshotContract
import EarshotDBus
import Foundation

/// Each service's everyday requests, as the load clients repeat them.
public enum LoadScenarios {
    /// The scenario for `busName`; `wave` is a short WAV file the pieces clients drop.
    public static func scenario(for busName: String, wave: String) -> LoadRunner.Scenario? {
        switch busName {
        case SessionContract.busName:
            // Setting and reading the session state.
            return LoadRunner.Scenario(busName: busName) { client in
                let manager: ObjectPath = "/org/earshot/Session1"
                let category = ["playback", "ambient", "playAndRecord", "soloAmbient"][(client.index + client.iteration) % 4]
                await client.call(manager, busName, SessionContract.Manager.setDesiredState.name, [.vardict(["Category": .string(category)])])
                await client.call(manager, busName, SessionContract.Manager.getState.name)
            }
        case AlertsContract.busName:
            // Presenting and cancelling alerts. Most are refused by the rate limit or a
            // full queue (they complete at once with REJECTED); cancelling one that has
            // completed is `Rejected`.
            return LoadRunner.Scenario(busName: busName, allowedErrors: [EarshotErrorName.rejected.name]) { client in
                guard let path = await client.call(ObjectPath(declared: AlertsContract.managerPath), busName, AlertsContract.Manager.presentAlert.name, [.vardict([
                    "Text": .string("Load \(client.index)"), "Timeout": .double(3),
                ])])?.first?.objectPathValue else { return }
                await client.call(path, AlertsContract.Alert.interface.name, AlertsContract.Alert.cancel.name)
            }
        case PiecesContract.busName:
            // Dropping and listing pieces (a client's time filter included: reading it once
            // opened ICU's zone data).
            return LoadRunner.Scenario(busName: busName) { client in
                let manager: ObjectPath = "/org/earshot/Pieces1"
                await client.call(manager, busName, PiecesContract.Manager.drop.name, [.vardict([
                    "Title": .string("Load \(client.index).\(client.iteration)"), "MixStemPath": .string(wave),
                    "Tempo": .double(Double(60 + client.index % 120)),
                ])])
                await client.call(manager, busName, PiecesContract.Manager.list.name, [.vardict([
                    "TempoMin": .double(80), "TempoMax": .double(140), "CreatedAfter": .string("2026-01-01T00:00:00+01:00"),
                    "Limit": .uint32(20),
                ])])
            }
        case CaptureContract.busName:
            // Starting and ending pass-thrus in turn: one runs at a time, the others are
            // `Rejected` with the time left.
            return LoadRunner.Scenario(busName: busName, allowedErrors: [EarshotErrorName.rejected.name]) { client in
                let started = await client.call(ObjectPath(declared: CaptureContract.managerPath), busName, CaptureContract.Manager.performAudioPassThru.name, [.vardict([
                    "SamplingRate": .uint32(16000), "BitsPerSample": .uint32(16), "AudioType": .string("PCM"),
                    "MaxDuration": .uint32(2000),
                ])])
                guard started != nil else {
                    try? await Task.sleep(for: .milliseconds(20))
                    return
                }
                try? await Task.sleep(for: .milliseconds(50))
                await client.call(ObjectPath(declared: CaptureContract.managerPath), busName, CaptureContract.Manager.endAudioPassThru.name)
            }
        case OrchestratorContract.busName:
            // Reading the services' health, starting a job and cancelling it.
            return LoadRunner.Scenario(busName: busName, allowedErrors: [EarshotErrorName.rejected.name]) { client in
                let manager: ObjectPath = "/org/earshot/Orchestrator1"
                await client.call(manager, "org.freedesktop.DBus.Properties", "Get", [.string(busName), .string(OrchestratorContract.Manager.services.name)])
                guard let job = await client.call(manager, busName, OrchestratorContract.Manager.recordPiece.name, [.vardict([
                    "Title": .string("Load \(client.index)"), "MaxDuration": .uint32(500),
                ])])?.first?.objectPathValue else { return }
                await client.call(job, OrchestratorContract.Job.interface.name, OrchestratorContract.Job.cancel.name)
            }
        default:
            return nil
        }
    }
}
