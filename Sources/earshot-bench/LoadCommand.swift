import ArgumentParser
import EarshotDBus
import EarshotTestHarness
import Foundation

/// `earshot-bench load`: the load test of the suite, run longer, with a report per service.
struct LoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Many concurrent clients against each service; reply times, errors and memory.",
        discussion: """
            Starts all services on a private bus (release builds next to this binary) once per \
            service, then runs --clients clients, each on its own connection, for --seconds: \
            session clients set and read the state, alert clients present and cancel alerts, \
            piece clients drop and list pieces, capture clients start and end pass-thrus in \
            turn, orchestrator clients read the services' health and start and cancel jobs. \
            Prints calls per second, reply p50/p99 per method, the documented rejections and \
            the service's VmRSS at the start, at the peak and after. Exits 1 on any other error.
            """)

    @Option(help: "Seconds of load per service.")
    var seconds = 60

    @Option(help: "Concurrent clients.")
    var clients = 200

    @Option(name: .customLong("service"), help: "A bus name to load (repeatable; default: every service).")
    var services: [String] = []

    func run() async throws {
        let chosen = ServiceStack.services.filter { services.isEmpty || services.contains($0.busName) }
        guard !chosen.isEmpty else { throw ValidationError("no such service: \(services.joined(separator: ", "))") }
        var failed = false
        for service in chosen {
            let report = try await ServiceStack.with { stack -> LoadRunner.Report in
                guard let process = stack.process(service.executable) else { throw ValidationError("\(service.executable) did not start") }
                let material = try FuzzMaterial(directory: stack.file("load"))
                guard let scenario = LoadScenarios.scenario(for: service.busName, wave: material.wave) else {
                    throw ValidationError("no load scenario for \(service.busName)")
                }
                return try await LoadRunner.run(bus: .address(stack.bus.address), scenario: scenario, clients: clients,
                                                duration: .seconds(seconds), pid: process.pid)
            }
            print(report)
            for problem in report.unexpected.prefix(10) { print("  UNEXPECTED: \(problem)") }
            failed = failed || !report.unexpected.isEmpty
        }
        if failed { throw ExitCode(1) }
    }
}
