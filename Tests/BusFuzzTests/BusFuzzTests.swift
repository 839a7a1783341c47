import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// Every service, fuzzed over a real bus with all the others running (all five at once,
/// each by its own fuzzer): each call gets a reply or a named error within libdbus's
/// default timeout, every service stays up, and each service's memory ends within 10 MiB
/// of where it started (after a warm-up of the valid requests and 500 fuzzed calls has
/// loaded what a first use loads).
///
/// `EARSHOT_FUZZ_CALLS` and `EARSHOT_FUZZ_SEED` change the number of calls per service
/// (default 5 000) and the seed (default fixed); `earshot-bench fuzz` runs longer ones.
@Suite("Bus fuzzing")
struct BusFuzzTests {
    static let calls = ProcessInfo.processInfo.environment["EARSHOT_FUZZ_CALLS"].flatMap { Int($0) } ?? 5000
    static let seed = ProcessInfo.processInfo.environment["EARSHOT_FUZZ_SEED"].flatMap { UInt64($0) } ?? 20_261_122

    /// libdbus's own default reply timeout: on a busy machine five fuzzers and five
    /// services share two cores, and a reply may take seconds; it must still come.
    static let replyTimeout: Duration = .seconds(25)

    struct Outcome: Sendable {
        let service: (executable: String, busName: String)
        let report: BusFuzzer.Report
        let before: UInt64
    }

    @Test func everyCallIsAnsweredAndMemoryStaysBounded() async throws {
        try await ServiceStack.with { stack in
            let outcomes = try await withThrowingTaskGroup(of: Outcome.self) { group in
                for (index, service) in ServiceStack.services.enumerated() {
                    guard let process = stack.process(service.executable) else { throw HarnessError("\(service.executable) is not running") }
                    let address = stack.bus.address
                    let directory = stack.file("fuzz-\(index)")
                    group.addTask {
                        let material = try FuzzMaterial(directory: directory)
                        let root = try ObjectPath("/" + service.busName.replacingOccurrences(of: ".", with: "/"))
                        let fuzzer = try await BusFuzzer(bus: .address(address), destination: service.busName, root: root,
                                                         seed: Self.seed &+ UInt64(index), material: material,
                                                         timeout: Self.replyTimeout)
                        try await fuzzer.warmUp(fuzzedCalls: 500)
                        let before = try ProcessSample.take(process.pid).rssKiB
                        _ = try await fuzzer.run(calls: Self.calls, isAlive: { process.isRunning })
                        // Requests the fuzzer started are ended (and linger for 5 s here).
                        try await fuzzer.finish()
                        return Outcome(service: service, report: fuzzer.report, before: before)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // Services hand free memory back to the system within 10 s of their last call.
            try await Task.sleep(for: .seconds(11))
            for outcome in outcomes.sorted(by: { $0.service.busName < $1.service.busName }) {
                let process = try #require(stack.process(outcome.service.executable))
                #expect(process.isRunning, "\(outcome.service.executable) is not running after the fuzzing")
                let after = (try? ProcessSample.take(process.pid).rssKiB) ?? 0
                print("\(outcome.report)\n\(outcome.service.executable) VmRSS \(outcome.before / 1024) MiB before, \(after / 1024) MiB after")
                #expect(outcome.report.calls == Self.calls)
                #expect(outcome.report.failures.isEmpty, "\(outcome.report.failures.prefix(10).joined(separator: "\n"))")
                #expect(Int(after) - Int(outcome.before) < 10 * 1024,
                        "\(outcome.service.executable): VmRSS grew from \(outcome.before) KiB to \(after) KiB")
            }
        }
    }
}
