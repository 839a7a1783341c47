import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Glibc

/// A typed EarshotClient call against the same D-Bus call made by the C client: a property
/// read of a real Earshot service (`AlertsProxy.read(.queueLength)`, Properties.Get of a `u`),
/// so that the default path measured is the one an application gets, with the client's
/// encoding, error mapping and typed decoding.
struct ClientCallResult: Encodable {
    let call: String
    /// `read(.queueLength)` through `AlertsProxy`, awaited from a task on the pool.
    let client: LatencySummary
    let c: LatencySummary
    /// This process's CPU time per call (all threads), in µs.
    let clientCPUMicroseconds: Double
    let cCPUMicroseconds: Double

    var p50Ratio: Double { client.p50Microseconds / c.p50Microseconds }
}

extension DBusBenchmark {
    /// Starts earshot-alerts (no output device: nothing is presented) on `bus` and times
    /// `calls` reads of its queue length through each client, in alternating rounds.
    func measureClientCall(bus: PrivateBus, swift: DBusConnection, c: CEchoPeer, calls: Int, warmup: Int) async throws -> ClientCallResult {
        progress("client call: starting earshot-alerts for typed property reads")
        let service = try await ServiceProcess("earshot-alerts", arguments: ["--output-device", "null"], bus: bus,
                                               busName: AlertsContract.busName)
        defer { service.stop() }
        let alerts = AlertsProxy(connection: swift)
        let manager = AlertsContract.Manager.self
        let (destination, path) = (AlertsContract.busName, AlertsContract.managerPath)
        let (interface, property) = (manager.interface.name, manager.queueLength.name)

        func clientReads(_ times: Int, into latencies: inout [UInt64]) async throws {
            for _ in 0..<times {
                let start = monotonicNanoseconds()
                let length = try await alerts.read(.queueLength)
                latencies.append(monotonicNanoseconds() - start)
                guard length == 0 else { throw BenchmarkError("client: \(AlertsContract.Manager.queueLength.name) \(length), expected 0") }
            }
        }
        func cReads(_ times: Int, into latencies: inout [UInt64]) throws {
            for _ in 0..<times {
                let start = monotonicNanoseconds()
                let length = c.uint32Property(destination, path, interface, property)
                latencies.append(monotonicNanoseconds() - start)
                guard length == 0 else { throw BenchmarkError("C: Get \(AlertsContract.Manager.queueLength.name): \(length < 0 ? c.lastError : "\(length), expected 0")") }
            }
        }

        var discard: [UInt64] = []
        try await clientReads(warmup, into: &discard)
        try cReads(warmup, into: &discard)
        let perRound = max(1, (calls + plan.rounds - 1) / plan.rounds)
        progress("client call: \(plan.rounds) × \(perRound) reads per client")
        var client: [UInt64] = [], cLatencies: [UInt64] = []
        var clientCPU: UInt64 = 0, cCPU: UInt64 = 0
        for _ in 0..<plan.rounds {
            var start = ProcessSample.cpuNanoseconds(of: getpid()) ?? 0
            try await clientReads(perRound, into: &client)
            clientCPU += (ProcessSample.cpuNanoseconds(of: getpid()) ?? 0) - start
            start = ProcessSample.cpuNanoseconds(of: getpid()) ?? 0
            try cReads(perRound, into: &cLatencies)
            cCPU += (ProcessSample.cpuNanoseconds(of: getpid()) ?? 0) - start
        }
        await service.shutdown()
        let total = Double(perRound * plan.rounds)
        return ClientCallResult(call: "Alerts1 \(AlertsContract.Manager.queueLength.name) (Properties.Get, u)", client: LatencySummary(client), c: LatencySummary(cLatencies),
                                clientCPUMicroseconds: Double(clientCPU) / 1000 / total, cCPUMicroseconds: Double(cCPU) / 1000 / total)
    }
}
