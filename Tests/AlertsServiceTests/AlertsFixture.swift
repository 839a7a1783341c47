import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// A private bus, a file-backed ALSA speaker `spk` and the real earshot-alerts, spoken to
/// through EarshotClient.
struct AlertsFixture {
    static let busName = AlertsContract.busName
    static let outputRate = 22050

    let bus: PrivateBus
    let service: ServiceProcess
    let client: DBusConnection
    let speaker: URL
    let devices: ALSATestDevices

    static func with<T>(arguments: [String] = [], before: ((PrivateBus, ALSATestDevices) async throws -> Void)? = nil,
                        _ body: (AlertsFixture) async throws -> T) async throws -> T {
        try await ServiceSession.with("earshot-alerts", arguments: ["--output-device", "spk", "--linger-seconds", "5"] + arguments,
                                      busName: busName, prepare: { bus in
            let devices = Self.devices(of: bus)
            try devices.write()
            try await before?(bus, devices)
            return devices.environment
        }) { session in
            try await body(AlertsFixture(bus: session.bus, service: session.service, client: session.client,
                                         speaker: Self.speaker(of: session.bus), devices: Self.devices(of: session.bus)))
        }
    }

    /// The file the speaker writes.
    static func speaker(of bus: PrivateBus) -> URL {
        bus.directory.appendingPathComponent("speaker.raw")
    }

    /// The speaker `spk` and a microphone `mic` (reading `microphone.raw`, which a test may write).
    static func devices(of bus: PrivateBus) -> ALSATestDevices {
        var devices = ALSATestDevices(configPath: bus.directory.appendingPathComponent("asound.conf"))
        devices.speaker("spk", outfile: speaker(of: bus))
        devices.microphone("mic", infile: bus.directory.appendingPathComponent("microphone.raw"))
        return devices
    }

    /// The presenter through EarshotClient, on the fixture's connection or `connection`.
    var alerts: AlertsProxy { AlertsProxy(connection: client) }
    func alerts(on connection: DBusConnection?) -> AlertsProxy { AlertsProxy(connection: connection ?? client) }

    /// Subscribes to every alert's `Completed` (broadcast): a test that follows alerts from
    /// a connection other than their owners'.
    func completions(on connection: DBusConnection? = nil) async throws -> SignalSubscription {
        try await (connection ?? client).subscribe(MatchRule(sender: Self.busName, interface: AlertsContract.Alert.interface.name,
                                                             member: AlertsContract.Alert.completed.name))
    }

    /// Presents `alert` from `connection` (the fixture's by default) and returns its object.
    func present(_ alert: Alert, on connection: DBusConnection? = nil) async throws -> AlertControl {
        try await alerts(on: connection).submit(alert)
    }

    /// `PresentAlert` with a request the client refuses to send (wrong types, unknown keys,
    /// values out of range): what the service says to it.
    func present(raw alert: [String: DBusValue]) async throws {
        _ = try await client.call(destination: Self.busName, path: ObjectPath(declared: AlertsContract.managerPath),
                                  interface: AlertsContract.Manager.interface.name, member: AlertsContract.Manager.presentAlert.name,
                                  [.vardict(alert)])
    }

    /// Speaks `chunks` from `connection` (the fixture's by default) and returns its object.
    func speak(_ chunks: [SpeechChunk], _ options: SpeechOptions = SpeechOptions(), on connection: DBusConnection? = nil) async throws -> AlertControl {
        try await alerts(on: connection).startSpeaking(chunks, options: options).control
    }

    /// Waits for `alert`'s `Completed`, as EarshotClient reads it (so these tests also prove
    /// the client's reading).
    static func completion(of alert: AlertControl, in subscription: SignalSubscription, timeout: Duration = .seconds(20)) async throws -> AlertResult {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let signal = await subscription.next(timeout: deadline - ContinuousClock.now) else { break }
            guard signal.path == alert.path else { continue }
            return try #require(AlertResult(completed: signal.body), "Completed \(signal.body) is not as declared")
        }
        throw HarnessError("no Completed from \(alert.path) within \(timeout)")
    }

    /// The speaker's samples so far (mono S16_LE).
    func speakerSamples() throws -> [Int16] {
        let data = (try? Data(contentsOf: speaker)) ?? Data()
        return data.withUnsafeBytes { raw in Array(raw.bindMemory(to: Int16.self)) }
    }
}

extension Alert {
    /// An alert of `text` with the fields `configure` sets.
    static func text(_ text: String, _ configure: (inout Alert) -> Void = { _ in }) -> Alert {
        var alert = Alert(text: text)
        configure(&alert)
        return alert
    }
}

extension Alert.SoftButton {
    /// A button `id` labelled `text`, with `action`.
    static func labelled(_ id: UInt16, _ text: String, _ action: SystemAction = .defaultAction) -> Alert.SoftButton {
        var button = Alert.SoftButton(id: id, text: text)
        button.systemAction = action
        return button
    }
}

/// Whether the samples hold sound: RMS above a small floor.
func isAudible(_ samples: ArraySlice<Int16>) -> Bool {
    guard !samples.isEmpty else { return false }
    let energy = samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)
    return energy.squareRoot() > 200
}
