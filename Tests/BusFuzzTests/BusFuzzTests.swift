import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// Every service, fuzzed over a real bus with all the others running: each call gets a
/// reply or a named error within the timeout, every service stays up, and the fuzzed
/// service's memory ends within 10 MiB of where it started (after a warm-up of the valid
/// requests and 1 000 fuzzed calls has loaded what a first use loads).
///
/// `EARSHOT_FUZZ_CALLS` and `EARSHOT_FUZZ_SEED` change the number of calls per service
/// (default 5 000) and the seed (default fixed); `earshot-bench fuzz` runs longer ones.
@Suite("Bus fuzzing", .serialized)
struct BusFuzzTests {
    static let calls = ProcessInfo.processInfo.environment["EARSHOT_FUZZ_CALLS"].flatMap { Int($0) } ?? 5000
    static let seed = ProcessInfo.processInfo.environment["EARSHOT_FUZZ_SEED"].flatMap { UInt64($0) } ?? 20_261_122

    @Test(arguments: ServiceStack.services)
    func everyCallIsAnsweredAndMemoryStaysBounded(service: (executable: String, busName: String)) async throws {
        try await ServiceStack.with { stack in
            let process = try #require(stack.process(service.executable))
            let material = try FuzzMaterial(directory: stack.file("fuzz"))
            let root = try ObjectPath("/" + service.busName.replacingOccurrences(of: ".", with: "/"))
            let fuzzer = try await BusFuzzer(bus: .address(stack.bus.address), destination: service.busName, root: root,
                                             seed: Self.seed, material: material)
            try await fuzzer.warmUp()
            let before = try ProcessSample.take(process.pid).rssKiB
            let report = try await fuzzer.run(calls: Self.calls, isAlive: { process.isRunning })
            // Requests the fuzzer started are ended (and linger for 5 s in this stack);
            // services hand free memory back to the system every 10 s.
            try await fuzzer.finish()
            try await Task.sleep(for: .seconds(11))
            let after = try ProcessSample.take(process.pid).rssKiB
            print("\(report)\n\(service.executable) VmRSS \(before / 1024) MiB before, \(after / 1024) MiB after")

            #expect(report.calls == Self.calls)
            #expect(report.failures.isEmpty, "\(report.failures.prefix(10).joined(separator: "\n"))")
            #expect(Int(after) - Int(before) < 10 * 1024, "VmRSS grew from \(before) KiB to \(after) KiB")
            for other in ServiceStack.everything {
                #expect(stack.process(other)?.isRunning == true, "\(other) is not running after fuzzing \(service.busName)")
            }
        }
    }
}
