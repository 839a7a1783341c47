import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// Each rejection cause on the bus: REJECTED with a try-again time within 50 ms of the
/// truth, and the same request accepted once that time has passed.
@Suite struct AlertRejectionTests {
    static let tolerance: Double = 50

    /// Presents `alert`, expecting a rejection for `reason` whose try-again time is within
    /// `tolerance` of the truth, then the same alert accepted once that time has passed.
    /// The truth is `expectedMs`, or, with `cleared`, the time until `cleared` returns
    /// (it waits for whatever blocks the alert to go away).
    static func rejectedThenAccepted(_ f: AlertsFixture, _ alert: [String: DBusValue], on connection: DBusConnection,
                                     reason: String, expectedMs: Double = 0, cleared: (() async throws -> Void)? = nil,
                                     completions: SignalSubscription) async throws {
        let refused = try await f.present(alert, on: connection)
        let refusedAt = ContinuousClock.now
        let rejection = try await AlertsFixture.completion(of: refused, in: completions)
        let tryAgain = Double(try #require(rejection.tryAgainMs))
        #expect(!rejection.success && rejection.resultCode == "REJECTED" && rejection.reason == reason)
        #expect(try await f.property("TryAgainTimeMs", path: refused) == .uint32(UInt32(tryAgain)))
        if let cleared {
            try await cleared()
            let truth = refusedAt.duration(to: .now)
            let truthMs = Double(truth.components.seconds) * 1000 + Double(truth.components.attoseconds) / 1e15
            #expect(abs(tryAgain - truthMs) <= tolerance, "TryAgainTimeMs \(tryAgain), truth \(truthMs)")
        } else {
            #expect(abs(tryAgain - expectedMs) <= tolerance, "TryAgainTimeMs \(tryAgain), truth \(expectedMs)")
            // Before the time (with room for a slow run's late wake-ups): still refused.
            try await Task.sleep(until: refusedAt + .milliseconds(max(0, tryAgain - 2000)))
            let early = try await f.present(alert, on: connection)
            #expect(try await AlertsFixture.completion(of: early, in: completions).resultCode == "REJECTED")
            try await Task.sleep(until: refusedAt + .milliseconds(tryAgain + tolerance))
        }
        let accepted = try await f.present(alert, on: connection)
        #expect(try await f.property("State", path: accepted) != .string("finished"))
    }

    @Test(.timeLimit(.minutes(3)))
    func fifthNormalAlertWithinAMinuteIsRateLimited() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let start = ContinuousClock.now
            for index in 0..<4 {
                let path = try await f.present(["Text": .string("alert \(index)")])
                try await f.call("Cancel", path: path)
            }
            let elapsed = Double((ContinuousClock.now - start).components.attoseconds / 1_000_000_000_000_000)
                + Double((ContinuousClock.now - start).components.seconds) * 1000
            // The first of the four leaves the window 60 s after it was accepted.
            try await Self.rejectedThenAccepted(f, ["Text": .string("fifth")], on: f.client, reason: "rate-limited",
                                                expectedMs: 60_000 - elapsed, completions: completions)
        }
    }

    @Test func fullQueueWaitsForThePresentedAlert() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            // Five clients × 4 NORMAL alerts stay within every rate limit.
            var clients: [DBusConnection] = []
            for _ in 0..<5 { clients.append(try await f.bus.connect()) }
            defer { clients.forEach { $0.close() } }
            let current = try await f.present(["Text": .string("current"), "Timeout": .double(4)], on: clients[0])
            for index in 1...16 {
                _ = try await f.present(["Text": .string("waiting \(index)")], on: clients[index / 4])
            }
            #expect(try await f.property("QueueLength") == .uint32(16))
            // Room appears when the presented alert times out.
            try await Self.rejectedThenAccepted(f, ["Text": .string("one too many")], on: clients[4], reason: "queue-full",
                                                cleared: { _ = try await AlertsFixture.completion(of: current, in: completions) },
                                                completions: completions)
        }
    }

    @Test func recordingPassThruRejectsAllButEmergency() async throws {
        // A file microphone with 10 s of silence, paced in real time.
        try await AlertsFixture.with(before: { bus, _ in
            try Data(count: 16000 * 2 * 10).write(to: bus.directory.appendingPathComponent("microphone.raw"))
        }) { f in
            let capture = try await ServiceProcess("earshot-capture", arguments: ["--device", "mic", "--pace", "realtime"],
                                                   bus: f.bus, busName: "org.earshot.Capture1", environment: f.devices.environment)
            defer { capture.stop() }
            let completions = try await f.completions()
            let recorder = try await f.bus.connect()
            defer { recorder.close() }
            let reply = try await recorder.call(destination: "org.earshot.Capture1", path: "/org/earshot/Capture1",
                                                interface: "org.earshot.Capture1", member: "PerformAudioPassThru",
                                                [.vardict(["SamplingRate": .uint32(16000), "BitsPerSample": .uint32(16),
                                                           "AudioType": .string("PCM"), "MaxDuration": .uint32(3000)])])
            let passThru = try #require(reply.first?.objectPathValue)
            let finished = try await recorder.subscribe(MatchRule(sender: "org.earshot.Capture1", interface: "org.earshot.Capture1.PassThru",
                                                                  member: "Finished", path: passThru))
            try await Task.sleep(for: .milliseconds(500))
            let emergency = try await f.present(["Text": .string("emergency"), "Priority": .string("EMERGENCY")])
            #expect(try await f.property("State", path: emergency) == .string("presenting"))
            try await f.call("Cancel", path: emergency)

            let alert: [String: DBusValue] = ["Text": .string("during capture"), "Priority": .string("VOICECOM")]
            // The capture service says when the pass-thru ends by its MaxDuration.
            let endsAt = try #require(try await f.client.call(destination: "org.earshot.Capture1", path: "/org/earshot/Capture1",
                                                              interface: "org.freedesktop.DBus.Properties", member: "Get",
                                                              [.string("org.earshot.Capture1"), .string("EndsAtMonotonicUs")])
                .first?.variantValue?.uint64Value)
            #expect(endsAt > monotonicMicroseconds())
            let refused = try await f.present(alert)
            let refusedAtUs = monotonicMicroseconds()
            let rejection = try await AlertsFixture.completion(of: refused, in: completions)
            let tryAgain = try #require(rejection.tryAgainMs)
            #expect(!rejection.success && rejection.resultCode == "REJECTED" && rejection.reason == "capture-active")
            // Exact: from the moment the service decided (just before its reply) to that end.
            let truthMs = (Double(endsAt) - Double(refusedAtUs)) / 1000
            #expect(Double(tryAgain) >= truthMs && Double(tryAgain) <= truthMs + Self.tolerance, "TryAgainTimeMs \(tryAgain), truth \(truthMs)")
            // The rule: 100 ms before that time the same request is refused again; at it, accepted.
            func sleep(untilUs target: UInt64) async throws {
                let now = monotonicMicroseconds()
                if target > now { try await Task.sleep(for: .microseconds(Int64(target - now))) }
            }
            try await sleep(untilUs: refusedAtUs + (UInt64(tryAgain) - 100) * 1000)
            let early = try await f.present(alert)
            #expect(try await AlertsFixture.completion(of: early, in: completions).reason == "capture-active")
            try await sleep(untilUs: refusedAtUs + UInt64(tryAgain) * 1000)
            let accepted = try await f.present(alert)
            #expect(try await f.property("State", path: accepted) == .string("presenting"))
            // And the published end was the pass-thru's true end, by its own clock.
            let end = try #require(await finished.next(timeout: .seconds(10)))
            let endedUs = try #require(end.body.last?.stringKeyedValue?["MonotonicUs"]?.uint64Value)
            #expect(abs(Double(endedUs) - Double(endsAt)) / 1000 <= Self.tolerance, "ended \((Double(endedUs) - Double(endsAt)) / 1000) ms from EndsAtMonotonicUs")
            await capture.shutdown()
        }
    }
}
