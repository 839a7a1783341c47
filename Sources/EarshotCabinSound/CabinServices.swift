import EarshotContract
import EarshotTestHarness
import Foundation
import Synchronization

/// earshot-alerts and earshot-capture on one private bus around a live cabin (`CabinLoop`):
/// the alert service plays into the cabin's speaker (an ALSA `file` PCM at `speakerRate`, in
/// real time) and the capture service reads its microphone (`--device mic --pace device`,
/// periods of `rate / 10` frames: a pass-thru's default 100 ms chunks), and may have the
/// speakers' monitor as its echo reference. What the tests and `earshot-bench echo` run a
/// pass-thru with `BargeIn` or `EchoCancel` on, as on a head unit.
public struct CabinServices: Sendable {
    public static let speakerRate = 22050

    public let session: ServiceSession
    public let cabin: CabinLoop
    public let alerts: ServiceProcess

    /// Starts the bus, the cabin (`scene` at the microphone, the speaker heard through
    /// `room`, `monitored` given to the speakers besides), the alert service and the capture
    /// service (each staying `lingerSeconds` once idle; capture with the speakers' monitor as
    /// its `--echo-reference` when `echoReference`), then runs `body`; the cabin is stopped
    /// and the alert service shut down after it, whatever happens (the capture service and
    /// the bus as `ServiceSession` does).
    public static func with<T>(scene: [Float], room: [Float], monitored: [Float] = [], echoReference: Bool = false, rate: Int,
                               lingerSeconds: Int, _ body: (CabinServices) async throws -> T) async throws -> T {
        let peers = Mutex<(cabin: CabinLoop?, alerts: ServiceProcess?)>((nil, nil))
        // What set-up started, when set-up or the capture service's start fails.
        defer {
            let (cabin, alerts) = peers.withLock { $0 }
            _ = cabin?.stop()
            alerts?.stop()
        }
        let linger = ["--linger-seconds", "\(lingerSeconds)"]
        let reference = echoReference ? ["--echo-reference", "monitor"] : []
        return try await ServiceSession.with("earshot-capture", arguments: ["--device", "mic", "--pace", "device"] + reference + linger,
                                             busName: CaptureContract.busName, prepare: { bus in
            let cabin = try CabinLoop(directory: bus.directory, speakerRate: speakerRate, rate: rate, periodFrames: rate / 10,
                                      scene: scene, room: room, monitored: monitored)
            try cabin.start()
            peers.withLock { $0.cabin = cabin }
            var devices = ALSATestDevices(configPath: bus.directory.appendingPathComponent("asound.conf"))
            devices.microphone("mic", infile: cabin.microphone)
            devices.microphone("monitor", infile: cabin.monitor)
            devices.speaker("speaker", outfile: cabin.speaker)
            try devices.write()
            let alerts = try await ServiceProcess("earshot-alerts", arguments: [
                "--output-device", "speaker", "--output-rate", "\(speakerRate)", "--output-pace", "realtime",
            ] + linger, bus: bus, busName: AlertsContract.busName, environment: devices.environment)
            peers.withLock { $0.alerts = alerts }
            return devices.environment
        }) { session in
            let (cabin, alerts) = peers.withLock { $0 }
            guard let cabin, let alerts else { throw HarnessError("the cabin's services were not started") }
            let outcome: Result<T, any Error>
            do {
                outcome = .success(try await body(CabinServices(session: session, cabin: cabin, alerts: alerts)))
            } catch {
                outcome = .failure(error)
            }
            // Stopped here, in order; the `defer` is left only what set-up started.
            peers.withLock { $0 = (nil, nil) }
            _ = cabin.stop()
            await alerts.shutdown()
            return try outcome.get()
        }
    }
}
