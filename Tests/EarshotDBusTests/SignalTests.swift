import EarshotDBus
import EarshotEcho
import Testing

@Suite struct SignalTests {
    static let noteRule = MatchRule(sender: EchoService.busName, interface: EchoService.interfaceName, member: "Note")

    @Test func broadcastsReachEverySubscriber() async throws {
        try await EchoFixture.with { echo in
            let other = try await echo.bus.connect()
            defer { other.close() }
            let mine = try await echo.client.subscribe(Self.noteRule)
            let theirs = try await other.subscribe(Self.noteRule)
            _ = try await echo.call("Broadcast", [.string("to all")])
            #expect(await nextSignal(mine)?.body == [.string("to all")])
            #expect(await nextSignal(theirs)?.body == [.string("to all")])
        }
    }

    @Test func unicastSignalsReachOnlyTheirDestination() async throws {
        try await EchoFixture.with { echo in
            // The caller receives a unicast signal without adding a match rule.
            let mine = try await echo.client.subscribe(Self.noteRule, addMatch: false)
            // A third connection matching the same signals on the bus must not see it.
            let third = try await echo.bus.connect()
            defer { third.close() }
            let theirs = try await third.subscribe(Self.noteRule)
            _ = try await echo.call("Unicast", [.string("private")])
            let received = try #require(await nextSignal(mine))
            #expect(received.body == [.string("private")])
            #expect(received.destination == echo.client.uniqueName)
            #expect(await nextSignal(theirs, timeout: .milliseconds(500)) == nil)
            // A broadcast afterwards does reach the third connection, so it was listening.
            _ = try await echo.call("Broadcast", [.string("public")])
            #expect(await nextSignal(theirs)?.body == [.string("public")])
        }
    }

    @Test func cancelledSubscriptionsStopAndRemoveTheirRule() async throws {
        try await EchoFixture.with { echo in
            let subscription = try await echo.client.subscribe(Self.noteRule)
            _ = try await echo.call("Broadcast", [.string("one")])
            #expect(await nextSignal(subscription)?.body == [.string("one")])
            subscription.cancel()
            #expect(await nextSignal(subscription, timeout: .milliseconds(200)) == nil)
            // The rule is gone from the bus: a fresh unicast-only subscription sees no broadcast.
            let probe = try await echo.client.subscribe(Self.noteRule, addMatch: false)
            _ = try await echo.call("Broadcast", [.string("two")])
            #expect(await nextSignal(probe, timeout: .milliseconds(500)) == nil)
        }
    }

    @Test func matchRulesAreQuoted() {
        let rule = MatchRule(sender: "org.example.A", member: "Changed", path: "/a", arguments: [0: "it's"])
        #expect(rule.description == "type='signal',sender='org.example.A',member='Changed',path='/a',arg0='it'\\''s'")
    }
}
