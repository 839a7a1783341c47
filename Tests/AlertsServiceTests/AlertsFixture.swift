import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// A private bus, a file-backed ALSA speaker `spk` and the real earshot-alerts.
struct AlertsFixture {
    static let busName = AlertsContract.busName
    static let path: ObjectPath = "/org/earshot/Alerts1"
    static let alertInterface = AlertsContract.Alert.interface.name
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

    /// Subscribes to every alert's `Completed` (broadcast).
    func completions(on connection: DBusConnection? = nil) async throws -> SignalSubscription {
        try await (connection ?? client).subscribe(MatchRule(sender: Self.busName, interface: Self.alertInterface, member: AlertsContract.Alert.completed.name))
    }

    func present(_ alert: [String: DBusValue], on connection: DBusConnection? = nil) async throws -> ObjectPath {
        let reply = try await (connection ?? client).call(destination: Self.busName, path: Self.path, interface: Self.busName,
                                                          member: AlertsContract.Manager.presentAlert.name, [.vardict(alert)])
        return try #require(reply.first?.objectPathValue)
    }

    func speak(_ chunks: [(String, String)], _ options: [String: DBusValue] = [:], on connection: DBusConnection? = nil) async throws -> ObjectPath {
        let value = DBusValue.array(.structure([.string, .string]), chunks.map { .structure([.string($0.0), .string($0.1)]) })
        let reply = try await (connection ?? client).call(destination: Self.busName, path: Self.path, interface: Self.busName,
                                                          member: AlertsContract.Manager.speak.name, [value, .vardict(options)])
        return try #require(reply.first?.objectPathValue)
    }

    /// Calls one of an alert's methods (`AlertsContract.Alert`).
    func call(_ method: MethodDeclaration, path: ObjectPath, _ arguments: [DBusValue] = [], on connection: DBusConnection? = nil) async throws {
        _ = try await (connection ?? client).call(destination: Self.busName, path: path, interface: Self.alertInterface,
                                                  member: method.name, arguments)
    }

    /// A property of the manager (`AlertsContract.Manager`) or, at an alert's path, of that alert (`AlertsContract.Alert`).
    func property(_ property: PropertyDeclaration, path: ObjectPath = path, interface: String? = nil) async throws -> DBusValue? {
        try await client.call(destination: Self.busName, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
                              [.string(interface ?? (path == Self.path ? Self.busName : Self.alertInterface)), .string(property.name)])
            .first?.variantValue
    }

    /// Sets a property of the manager (`AlertsContract.Manager`).
    func setProperty(_ property: PropertyDeclaration, _ value: DBusValue) async throws {
        _ = try await client.call(destination: Self.busName, path: Self.path, interface: "org.freedesktop.DBus.Properties",
                                  member: "Set", [.string(Self.busName), .string(property.name), .variant(value)])
    }

    /// How an alert completed: the signal as EarshotClient reads it (so these tests also
    /// prove the client's reading), and its raw info.
    struct Completion {
        var result: AlertResult
        var info: [String: DBusValue]
        var success: Bool { result.success }
        var resultCode: String { result.resultCode.rawValue }
        var reason: String? { result.reason?.rawValue }
        var tryAgainMs: UInt32? { result.tryAgainTimeMs }
        var warnings: [String] { result.warnings }
    }

    /// Waits for `path`'s `Completed`.
    static func completion(of path: ObjectPath, in subscription: SignalSubscription, timeout: Duration = .seconds(20)) async throws -> Completion {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let signal = await subscription.next(timeout: deadline - ContinuousClock.now) else { break }
            guard signal.path == path else { continue }
            let result = try #require(AlertResult(completed: signal.body), "Completed \(signal.body) is not as declared")
            return Completion(result: result, info: signal.body[2].stringKeyedValue ?? [:])
        }
        throw HarnessError("no Completed from \(path) within \(timeout)")
    }

    /// The speaker's samples so far (mono S16_LE).
    func speakerSamples() throws -> [Int16] {
        let data = (try? Data(contentsOf: speaker)) ?? Data()
        return data.withUnsafeBytes { raw in Array(raw.bindMemory(to: Int16.self)) }
    }
}

/// Whether the samples hold sound: RMS above a small floor.
func isAudible(_ samples: ArraySlice<Int16>) -> Bool {
    guard !samples.isEmpty else { return false }
    let energy = samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)
    return energy.squareRoot() > 200
}
