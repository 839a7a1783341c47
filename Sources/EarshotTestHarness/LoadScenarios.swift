import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import Foundation

private typealias AlertKeys = AlertsContract.Manager.Keys
private typealias CaptureKeys = CaptureContract.Manager.Keys
private typealias RecordKeys = OrchestratorContract.Manager.Keys

/// Each service's everyday requests, as the load clients repeat them.
///
/// Requests that are one call go through EarshotClient (`LoadClient.timed`). Those whose
/// EarshotClient method also subscribes to the service's broadcast signals before it
/// calls (`PresentAlert`, `PerformAudioPassThru`, `RecordPiece`) stay raw calls
/// (`LoadClient.call`), their keys spelled by the contract: through the client, every one
/// of the many load clients would add a match rule per request and receive every other
/// client's completions, which is not the load measured.
public enum LoadScenarios {
    /// How long a load client waits for any reply, as `LoadClient.call` does.
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
                guard let path = await client.call(ObjectPath(declared: AlertsContract.managerPath), busName, AlertsContract.Manager.presentAlert.name, [.vardict([
                    AlertKeys.text.name: .string("Load \(client.index)"), AlertKeys.timeout.name: .double(3),
                ])])?.first?.objectPathValue else { return }
                await client.timed(AlertsContract.Alert.cancel.name) { try await alerts.alert(at: path).cancel() }
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
                let started = await client.call(ObjectPath(declared: CaptureContract.managerPath), busName, CaptureContract.Manager.performAudioPassThru.name, [.vardict([
                    CaptureKeys.samplingRate.name: .uint32(16000), CaptureKeys.bitsPerSample.name: .uint32(16), CaptureKeys.audioType.name: .string("PCM"),
                    CaptureKeys.maxDuration.name: .uint32(2000),
                ])])
                guard started != nil else {
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
                guard let job = await client.call(ObjectPath(declared: OrchestratorContract.managerPath), busName, OrchestratorContract.Manager.recordPiece.name, [.vardict([
                    RecordKeys.title.name: .string("Load \(client.index)"), RecordKeys.maxDuration.name: .uint32(500),
                ])])?.first?.objectPathValue else { return }
                await client.call(job, OrchestratorContract.Job.interface.name, OrchestratorContract.Job.cancel.name)
            }
        default:
            return nil
        }
    }

    /// The standard member that reads a property (org.freedesktop.DBus.Properties).
    static let propertiesGet = "Get"
}

extension LoadClient {
    /// Runs `request` (one call through EarshotClient) and records it as `call` records a
    /// raw call, under `member`: how long it took, and after an error its D-Bus error name
    /// (`EarshotError.name`, the reply's own), counted as documented when the scenario
    /// allows it and collected otherwise. Returns its result, or nil after an error.
    @discardableResult
    func timed<Reply>(_ member: String, _ request: () async throws -> Reply) async -> Reply? {
        let start = monotonicNanoseconds()
        do {
            let reply = try await request()
            tally.record(member, milliseconds: Double(monotonicNanoseconds() - start) / 1e6, error: nil, unexpected: nil)
            return reply
        } catch {
            let name = (error as? EarshotError)?.name ?? (error as? DBusError)?.name ?? "\(type(of: error))"
            let allowed = allowedErrors.contains(name)
            tally.record(member, milliseconds: Double(monotonicNanoseconds() - start) / 1e6, error: name,
                         unexpected: allowed ? nil : "\(member): \(error)")
            return nil
        }
    }
}
