import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import Foundation


/// Each service's everyday requests, as the load clients repeat them.
///
/// Every request goes through EarshotClient (`LoadClient.timed`); alerts, pass-thrus and
/// jobs are started without following them (`submit`, `start`, `startRecording`), so that
/// the many load clients add no match rule per request and receive no one else's
/// completions, which is not the load measured.
public enum LoadScenarios {
    /// How long a load client waits for the session's replies.
    static let replyTimeout: Duration = .seconds(30)

    /// The scenario for `busName`; `wave` is a short WAV file the pieces clients drop.
    public static func scenario(for busName: String, wave: String) -> LoadRunner.Scenario? {
        switch busName {
        case SessionContract.busName:
            // Setting and reading the session state.
            return LoadRunner.Scenario(busName: busName) { client in
                let session = Earshot(connection: client.connection).session.timing(out: LoadScenarios.replyTimeout)
                let category = ["playback", "ambient", "playAndRecord", "soloAmbient"][(client.index + client.iteration) % 4]
                let desired = DesiredSessionState(category: category)
                await client.timed(SessionContract.Manager.setDesiredState.name) { try await session.setDesiredState(desired) }
                await client.timed(SessionContract.Manager.getState.name) { try await session.state() }
            }
        case AlertsContract.busName:
            // Presenting and cancelling alerts. Most are refused by the rate limit or a
            // full queue (they complete at once with REJECTED); cancelling one that has
            // completed is `Rejected`.
            return LoadRunner.Scenario(busName: busName, allowedErrors: [EarshotErrorName.rejected.name]) { client in
                let alerts = Earshot(connection: client.connection).alerts
                var alert = Alert(text: "Load \(client.index)")
                alert.timeout = 3
                let request = alert
                guard let presented = await client.timed(AlertsContract.Manager.presentAlert.name, { try await alerts.submit(request) })
                else { return }
                await client.timed(AlertsContract.Alert.cancel.name) { try await presented.cancel() }
            }
        case PiecesContract.busName:
            // Dropping and listing pieces (a client's time filter included: reading it once
            // opened ICU's zone data).
            return LoadRunner.Scenario(busName: busName) { client in
                let pieces = Earshot(connection: client.connection).pieces
                var draft = PieceDrop(title: "Load \(client.index).\(client.iteration)", mixStemPath: wave)
                draft.metadata.tempo = Double(60 + client.index % 120)
                let piece = draft
                await client.timed(PiecesContract.Manager.drop.name) { try await pieces.drop(piece) }
                var filter = PieceQuery()
                filter.tempoMin = 80
                filter.tempoMax = 140
                filter.createdAfter = "2026-01-01T00:00:00+01:00"
                filter.limit = 20
                let query = filter
                await client.timed(PiecesContract.Manager.list.name) { try await pieces.list(query) }
            }
        case CaptureContract.busName:
            // Starting and ending pass-thrus in turn: one runs at a time, the others are
            // `Rejected` with the time left.
            return LoadRunner.Scenario(busName: busName, allowedErrors: [EarshotErrorName.rejected.name]) { client in
                let capture = Earshot(connection: client.connection).capture
                let request = AudioPassThruRequest(samplingRate: 16000, bitsPerSample: 16, maxDurationMs: 2000)
                guard await client.timed(CaptureContract.Manager.performAudioPassThru.name, { try await capture.start(request) }) != nil else {
                    try? await Task.sleep(for: .milliseconds(20))
                    return
                }
                try? await Task.sleep(for: .milliseconds(50))
                await client.timed(CaptureContract.Manager.endAudioPassThru.name) { try await capture.endActive() }
            }
        case OrchestratorContract.busName:
            // Reading the services' health, starting a job and cancelling it.
            return LoadRunner.Scenario(busName: busName, allowedErrors: [EarshotErrorName.rejected.name]) { client in
                let orchestrator = Earshot(connection: client.connection).orchestrator
                // Counted under the member called (org.freedesktop.DBus.Properties.Get), as before.
                await client.timed(LoadScenarios.propertiesGet) { try await orchestrator.services() }
                var record = RecordPieceRequest(title: "Load \(client.index)")
                record.maxDurationMs = 500
                let request = record
                guard let job = await client.timed(OrchestratorContract.Manager.recordPiece.name, { try await orchestrator.startRecording(request) })
                else { return }
                await client.timed(OrchestratorContract.Job.cancel.name) { try await job.cancel() }
            }
        default:
            return nil
        }
    }

    /// The standard member that reads a property (org.freedesktop.DBus.Properties).
    static let propertiesGet = "Get"
}
