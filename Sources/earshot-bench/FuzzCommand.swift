import ArgumentParser
import EarshotDBus
import EarshotTestHarness
import Foundation

/// `earshot-bench fuzz`: the bus fuzzer of the test suite, run longer and with a random
/// seed, against every service on a private bus (release builds next to this binary).
struct FuzzCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz",
        abstract: "Fuzz every service over a private bus and check each call is answered.",
        discussion: """
            Starts all services on a private bus (file-backed microphone, null speaker) once \
            per fuzzed service, sends each of the contract's valid requests once, then makes \
            --calls fuzzed calls and reports replies, error names, calls without a reply and \
            the service's VmRSS before and after. The seed is printed first; pass it back with \
            --seed to repeat a run. Exits 1 when a call went unanswered, a service exited, or \
            memory grew by 10 MiB or more.
            """)

    @Option(help: "Fuzzed calls per service.")
    var calls = 200_000

    @Option(help: "The seed (default: random, printed).")
    var seed: UInt64?

    @Option(name: .customLong("service"), help: "A bus name to fuzz (repeatable; default: every service).")
    var services: [String] = []

    @Option(help: "Seconds a call may take before it counts as unanswered.")
    var timeoutSeconds = 5

    @Option(help: "Seconds to wait after the run before measuring memory again (services return free memory within 10 s of their last call).")
    var settleSeconds = 11

    func run() async throws {
        let seed = seed ?? UInt64.random(in: 1...UInt64.max)
        print("seed \(seed)")
        let chosen = ServiceStack.services.filter { services.isEmpty || services.contains($0.busName) }
        guard !chosen.isEmpty else { throw ValidationError("no such service: \(services.joined(separator: ", "))") }
        var failed = false
        for service in chosen {
            let ok = try await ServiceStack.with { stack -> Bool in
                guard let process = stack.process(service.executable) else { return false }
                let material = try FuzzMaterial(directory: stack.file("fuzz"))
                let root = try ObjectPath("/" + service.busName.replacingOccurrences(of: ".", with: "/"))
                let fuzzer = try await BusFuzzer(bus: .address(stack.bus.address), destination: service.busName, root: root,
                                                 seed: seed, material: material, timeout: .seconds(timeoutSeconds))
                try await fuzzer.warmUp()
                let before = try ProcessSample.take(process.pid).rssKiB
                let report = try await fuzzer.run(calls: calls, isAlive: { process.isRunning }) { progress in
                    if progress.calls % 10_000 == 0 { print("  \(service.busName): \(progress.calls) calls") }
                }
                try await fuzzer.finish()
                print(fuzzer.report)
                try await Task.sleep(for: .seconds(settleSeconds))
                let after = (try? ProcessSample.take(process.pid).rssKiB) ?? 0
                print("  \(service.executable) VmRSS \(before / 1024) MiB before, \(after / 1024) MiB after")
                for failure in report.failures.prefix(20) { print("  FAILED: \(failure)") }
                let othersUp = ServiceStack.everything.allSatisfy { stack.process($0)?.isRunning == true }
                if !othersUp { print("  FAILED: a service exited while \(service.busName) was fuzzed") }
                return report.failures.isEmpty && othersUp && Int(after) - Int(before) < 10 * 1024
            }
            failed = failed || !ok
        }
        print("seed \(seed): \(failed ? "FAILED" : "every call answered, every service up")")
        if failed { throw ExitCode(1) }
    }
}
