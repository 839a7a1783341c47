import EarshotClient
import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc
import Testing

/// Every proxy gives up on a service that does not answer after the time it was given.
@Suite struct ProxyTimeoutTests {
    @Test func eachProxyGivesUpAfterItsOwnTimeout() async throws {
        try await ServiceStack.with { stack in
            let earshot = Earshot(connection: stack.client)
            // Stopped, they keep their names and their queued calls, and answer nothing.
            let stopped = ["earshot-capture", "earshot-alerts", "earshot-pieces", "earshot-orchestrator", "earshot-session"]
            for name in stopped { stack.process(name)?.signal(SIGSTOP) }
            defer { for name in stopped { stack.process(name)?.signal(SIGCONT) } }
            let limit = Duration.milliseconds(300)
            let calls: [(String, @Sendable () async throws -> Void)] = [
                ("capture", { _ = try await earshot.capture.timing(out: limit).start(AudioPassThruRequest(maxDurationMs: 100)) }),
                ("alerts", { _ = try await earshot.alerts.timing(out: limit).submit(Alert(text: "Fuel low")) }),
                ("pieces", { _ = try await earshot.pieces.timing(out: limit).count() }),
                ("orchestrator", { _ = try await earshot.orchestrator.timing(out: limit).services() }),
                ("session", { _ = try await earshot.session.timing(out: limit).state() }),
            ]
            for (service, call) in calls {
                let started = ContinuousClock.now
                let error = await #expect(throws: EarshotError.self, "\(service)") { try await call() }
                let took = ContinuousClock.now - started
                #expect(error?.name == "org.freedesktop.DBus.Error.NoReply", "\(service): \(String(describing: error))")
                #expect(took >= limit && took < .seconds(5), "\(service) gave up after \(took)")
            }
        }
    }
}
