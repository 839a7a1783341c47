import EarshotClient
import EarshotDBus
import Foundation

/// Many clients at once against one service, each on its own connection, each repeating
/// the service's everyday requests for a while: replies are timed per method, error
/// replies other than the documented rejections are collected, and the service's memory
/// is sampled throughout.
public enum LoadRunner {
    /// What one client does, over and over.
    public struct Scenario: Sendable {
        public let busName: String
        /// Error names the contract documents for these requests under load (a pass-thru
        /// already active, an alert already finished…).
        public let allowedErrors: Set<String>
        public let step: @Sendable (LoadClient) async -> Void

        public init(busName: String, allowedErrors: Set<String> = [], step: @escaping @Sendable (LoadClient) async -> Void) {
            self.busName = busName
            self.allowedErrors = allowedErrors
            self.step = step
        }
    }

    public struct Report: Sendable, CustomStringConvertible {
        public var busName: String
        public var clients: Int
        public var seconds: Double
        public var calls = 0
        public var errors: [String: Int] = [:]
        public var unexpected: [String] = []
        /// Reply times in milliseconds by method.
        public var latencies: [String: [Double]] = [:]
        public var rssStartKiB: UInt64 = 0
        public var rssPeakKiB: UInt64 = 0
        public var rssEndKiB: UInt64 = 0

        public func percentile(_ p: Double, of method: String? = nil) -> Double {
            let values = (method.map { latencies[$0] ?? [] } ?? latencies.values.flatMap { $0 }).sorted()
            guard !values.isEmpty else { return 0 }
            return values[min(values.count - 1, Int(Double(values.count - 1) * p + 0.5))]
        }

        public var description: String {
            let perMethod = latencies.keys.sorted().map { method in
                "\(method) \(latencies[method]!.count) calls, p50 \(fixed(percentile(0.5, of: method))) ms, p99 \(fixed(percentile(0.99, of: method))) ms"
            }.joined(separator: "; ")
            let errorText = errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            return """
            \(busName): \(clients) clients for \(fixed(seconds)) s: \(calls) calls (\(fixed(Double(calls) / max(seconds, 0.001))) per s), \
            replies p50 \(fixed(percentile(0.5))) ms, p99 \(fixed(percentile(0.99))) ms; \(perMethod); \
            documented errors [\(errorText.isEmpty ? "none" : errorText)], \(unexpected.count) unexpected; \
            VmRSS \(rssStartKiB / 1024) MiB at the start, \(rssPeakKiB / 1024) MiB at the peak, \(rssEndKiB / 1024) MiB after
            """
        }

        private func fixed(_ value: Double) -> String { String(format: "%.1f", value) }
    }

    /// Runs `clients` clients of `scenario` for `duration` against the service `pid`;
    /// `settle` is waited after the run before the last memory sample.
    public static func run(bus: BusAddress, scenario: Scenario, clients: Int, duration: Duration, pid: Int32,
                           settle: Duration = .seconds(11)) async throws -> Report {
        var connections: [DBusConnection] = []
        for _ in 0..<clients { connections.append(try await DBusConnection.connect(bus)) }
        defer { for connection in connections { connection.close() } }
        let tally = LoadTally()
        var report = Report(busName: scenario.busName, clients: clients, seconds: 0)
        report.rssStartKiB = (try? ProcessSample.take(pid).rssKiB) ?? 0
        let peak = Locked(report.rssStartKiB)
        let start = ContinuousClock.now
        let deadline = start + duration
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while ContinuousClock.now < deadline {
                    if let rss = try? ProcessSample.take(pid).rssKiB { peak.withLock { $0 = max($0, rss) } }
                    try? await Task.sleep(for: .milliseconds(250))
                }
            }
            for (index, connection) in connections.enumerated() {
                let client = LoadClient(connection: connection, index: index,
                                        allowedErrors: scenario.allowedErrors, tally: tally)
                group.addTask {
                    while ContinuousClock.now < deadline {
                        await scenario.step(client)
                        client.iteration += 1
                    }
                }
            }
        }
        let elapsed = (ContinuousClock.now - start).components
        report.seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        tally.fill(&report)
        report.rssPeakKiB = peak.withLock { $0 }
        for connection in connections { connection.close() }
        try await Task.sleep(for: settle)
        report.rssEndKiB = (try? ProcessSample.take(pid).rssKiB) ?? 0
        return report
    }
}

/// What the clients measured, shared by all of them.
final class LoadTally: Sendable {
    private struct State {
        var calls = 0
        var errors: [String: Int] = [:]
        var unexpected: [String] = []
        var latencies: [String: [Double]] = [:]
    }
    private let state = Locked(State())

    func record(_ method: String, milliseconds: Double, error: String?, unexpected: String?) {
        state.withLock { s in
            s.calls += 1
            s.latencies[method, default: []].append(milliseconds)
            if let error { s.errors[error, default: 0] += 1 }
            if let unexpected, s.unexpected.count < 50 { s.unexpected.append(unexpected) }
        }
    }

    func fill(_ report: inout LoadRunner.Report) {
        state.withLock { s in
            report.calls = s.calls
            report.errors = s.errors
            report.unexpected = s.unexpected
            report.latencies = s.latencies
        }
    }
}

/// One load client: its connection, and timed calls that record their outcome.
public final class LoadClient: Sendable {
    public let connection: DBusConnection
    public let index: Int
    let allowedErrors: Set<String>
    let tally: LoadTally
    private let iterations = Locked(0)

    init(connection: DBusConnection, index: Int, allowedErrors: Set<String>, tally: LoadTally) {
        self.connection = connection
        self.index = index
        self.allowedErrors = allowedErrors
        self.tally = tally
    }

    /// How many steps this client has finished.
    public var iteration: Int {
        get { iterations.withLock { $0 } }
        set { iterations.withLock { $0 = newValue } }
    }

    /// Runs `request` (one call through EarshotClient) and records it under `member`: how
    /// long it took, and after an error its D-Bus error name (`EarshotError.name`, the
    /// reply's own), counted when the scenario documents it and collected otherwise.
    /// Returns its result, or nil after an error.
    @discardableResult
    public func timed<Reply>(_ member: String, _ request: () async throws -> Reply) async -> Reply? {
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
