@testable import EarshotClient
import EarshotTestHarness
import Testing

/// A proxy's settings compose: a new timeout keeps a proxy that must not start its service
/// from starting it, and the other way round.
@Suite struct ProxySettingsTests {
    @Test func aTimeoutKeepsWhetherCallsStartTheService() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let connection = try await bus.connect()
        defer { connection.close() }
        let limit = Duration.milliseconds(300)
        let session = SessionProxy(connection: connection).withoutStartingService().timing(out: limit)
        #expect(!session.calls.startsService && session.calls.timeout == limit)
        let again = SessionProxy(connection: connection).timing(out: limit).withoutStartingService()
        #expect(!again.calls.startsService && again.calls.timeout == limit)
        let earshot = Earshot(connection: connection)
        #expect(earshot.capture.timing(out: limit).calls.timeout == limit)
        #expect(earshot.alerts.timing(out: limit).calls.timeout == limit)
        #expect(earshot.pieces.timing(out: limit).calls.timeout == limit)
        #expect(earshot.orchestrator.timing(out: limit).calls.timeout == limit)
        await bus.shutdown()
    }
}
