import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation

/// The `PresentAlert` round-trip phases of `earshot-bench alerts`.
extension AlertsBenchmark {
    /// The alert every round-trip call presents.
    var alert: Alert {
        var alert = Alert(text: sentence, audio: [.text(sentence)])
        alert.priority = Alert.Priority(rawValue: priority) ?? .normal
        return alert
    }

    /// One `PresentAlert` through EarshotClient, as an application presents one it acts on
    /// by its object (`submit`: no subscription to `Completed` first, which `show` makes;
    /// the observer connection sees every completion).
    func presentAlert(on connection: DBusConnection) async throws -> ObjectPath {
        try await AlertsProxy(connection: connection).submit(alert).path
    }

    /// Untimed calls from a connection of their own, which then leaves (ending its alerts).
    func warmUp(calls: Int, bus: PrivateBus, manager: DBusConnection) async throws {
        guard calls > 0 else { return }
        progress("warming up: \(calls) \(AlertsContract.Manager.presentAlert.name) calls from one connection")
        let client = try await bus.connect()
        for _ in 0..<calls { _ = try await presentAlert(on: client) }
        client.close()
        try await waitUntilIdle(manager)
    }

    /// `clients` fresh connections, each making `callsPerClient` calls in sequence, all at
    /// once; then they leave, which ends their queued and presented alerts (owner-vanished).
    func roundTrips(clients: Int, callsPerClient: Int, bus: PrivateBus, manager: DBusConnection,
                    completions: AlertCompletions) async throws -> AlertRoundTripResult {
        progress("\(clients) client(s) x \(callsPerClient) \(AlertsContract.Manager.presentAlert.name) calls")
        let connections = try await withThrowingTaskGroup(of: DBusConnection.self) { group in
            for _ in 0..<clients { group.addTask { try await bus.connect() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        defer { connections.forEach { $0.close() } }
        // One untimed call per connection that does not touch the queue: the route to the
        // service is known and the connection's thread is running.
        for connection in connections { _ = try await AlertsProxy(connection: connection).read(.queueLength) }

        struct Sample: Sendable {
            let nanoseconds: UInt64
            let path: ObjectPath?
        }
        let start = monotonicNanoseconds()
        let samples = try await withThrowingTaskGroup(of: [Sample].self) { group in
            for connection in connections {
                group.addTask {
                    var samples: [Sample] = []
                    samples.reserveCapacity(callsPerClient)
                    for _ in 0..<callsPerClient {
                        try Task.checkCancellation()
                        let begin = monotonicNanoseconds()
                        let path = try? await presentAlert(on: connection)
                        samples.append(Sample(nanoseconds: monotonicNanoseconds() - begin, path: path))
                    }
                    return samples
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let wall = Double(monotonicNanoseconds() - start) / 1e9

        connections.forEach { $0.close() }
        try await waitUntilIdle(manager)
        let paths = samples.compactMap(\.path)
        let known = try await completions.wait(forAll: paths, timeout: .seconds(15))

        var outcomes: [String: Int] = [:]
        var all: [Double] = [], accepted: [Double] = [], rejected: [Double] = []
        for sample in samples {
            guard let path = sample.path else { continue }
            let microseconds = Double(sample.nanoseconds) / 1000
            all.append(microseconds)
            guard let completion = known[path] else {
                outcomes["unknown", default: 0] += 1
                continue
            }
            if completion.accepted {
                outcomes["accepted", default: 0] += 1
                accepted.append(microseconds)
            } else {
                outcomes[completion.reason, default: 0] += 1
                rejected.append(microseconds)
            }
        }
        return AlertRoundTripResult(clients: clients, callsPerClient: callsPerClient, calls: paths.count,
                                    errors: samples.count - paths.count, wallSeconds: wall,
                                    callsPerSecond: Double(paths.count) / wall, allMicroseconds: Figures(all),
                                    acceptedMicroseconds: Figures(accepted), rejectedMicroseconds: Figures(rejected),
                                    outcomes: outcomes)
    }

    /// Waits until no alert is presented or waiting.
    func waitUntilIdle(_ manager: DBusConnection, timeout: Duration = .seconds(20)) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            try Task.checkCancellation()
            let values = try await AlertsProxy(connection: manager).readAll()
            if values[.queueLength] == 0, values[.current] == .some(nil) { return }
            guard ContinuousClock.now < deadline else {
                throw BenchmarkError("the alert queue did not empty within \(timeout): \(values)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
