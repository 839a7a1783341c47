import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// 200 clients at once against each service (all services running on one private bus),
/// each on its own connection, repeating the service's everyday requests: no error other
/// than the documented rejections, and memory bounded. `EARSHOT_LOAD_SECONDS` and
/// `EARSHOT_LOAD_CLIENTS` change the defaults (10 s, 200); `earshot-bench load` runs the
/// 60-second version.
@Suite("Load", .serialized)
struct LoadTests {
    static let seconds = ProcessInfo.processInfo.environment["EARSHOT_LOAD_SECONDS"].flatMap { Int($0) } ?? 10
    static let clients = ProcessInfo.processInfo.environment["EARSHOT_LOAD_CLIENTS"].flatMap { Int($0) } ?? 200

    @Test(arguments: ServiceStack.services)
    func manyClientsGetOnlyDocumentedErrorsAndMemoryStaysBounded(service: (executable: String, busName: String)) async throws {
        try await ServiceStack.with { stack in
            let process = try #require(stack.process(service.executable))
            let material = try FuzzMaterial(directory: stack.file("load"))
            let scenario = try #require(LoadScenarios.scenario(for: service.busName, wave: material.wave))
            let report = try await LoadRunner.run(bus: .address(stack.bus.address), scenario: scenario, clients: Self.clients,
                                                  duration: .seconds(Self.seconds), pid: process.pid)
            print(report)
            #expect(report.unexpected.isEmpty, "\(report.unexpected.prefix(10).joined(separator: "\n"))")
            #expect(report.calls >= Self.clients, "only \(report.calls) calls were answered")
            #expect(process.isRunning)
            // Bounded: the peak stays within 128 MiB of the start, and once the clients
            // are gone (and free memory returned) within 32 MiB.
            #expect(Int(report.rssPeakKiB) - Int(report.rssStartKiB) < 128 * 1024, "\(report)")
            #expect(Int(report.rssEndKiB) - Int(report.rssStartKiB) < 32 * 1024, "\(report)")
        }
    }
}
