import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// Each rejection cause on the bus: REJECTED with a try-again time that is exact, by the
/// rule: the same request 100 ms before that time is refused again, at that time accepted
/// (nothing else changing in between). One at a time: each times its requests to within
/// 100 ms, which a machine busy with the others' services and speech can make it miss.
@Suite(.serialized) struct AlertRejectionTests {
    static let tolerance: Double = 50

    static func sleep(untilUs target: UInt64) async throws {
        let now = monotonicMicroseconds()
        if target > now { try await Task.sleep(for: .microseconds(Int64(target - now))) }
    }

    /// Presents `alert`, expecting a rejection for `reason`, then checks the rule; returns
    /// the try-again time.
    @discardableResult
    static func ruleHolds(_ f: AlertsFixture, _ alert: Alert, on connection: DBusConnection,
                          reason: AlertEndReason, completions: SignalSubscription) async throws -> UInt32 {
        try await timedRuleHolds(f, alert, on: connection, reason: reason, completions: completions).ms
    }

    /// `ruleHolds`, also returning when the refusal's reply came (µs): the try-again time
    /// counts from a moment before it.
    static func timedRuleHolds(_ f: AlertsFixture, _ alert: Alert, on connection: DBusConnection,
                               reason: AlertEndReason, completions: SignalSubscription) async throws -> (ms: UInt32, sentUs: UInt64, repliedUs: UInt64) {
        let sentUs = monotonicMicroseconds()
        let refused = try await f.present(alert, on: connection)
        let repliedUs = monotonicMicroseconds()
        let rejection = try await AlertsFixture.completion(of: refused, in: completions)
        let tryAgain = try #require(rejection.tryAgainTimeMs)
        #expect(!rejection.success && rejection.resultCode == .rejected && rejection.reason == reason,
                "\(rejection.resultCode) \(rejection.reason?.rawValue ?? "")")
        #expect(try await refused.read(.tryAgainTimeMs) == tryAgain)
        // Timed from before the request (the service decided after it): still refused.
        let earlyUs = sentUs + (UInt64(tryAgain) - min(UInt64(tryAgain), 100)) * 1000
        try await sleep(untilUs: earlyUs)
        let earlySentUs = monotonicMicroseconds()
        let early = try await f.present(alert, on: connection)
        let earlyRepliedUs = monotonicMicroseconds()
        let timing = "asked \((earlySentUs - earlyUs) / 1000) ms after the moment 100 ms early, answered \((earlyRepliedUs - earlySentUs) / 1000) ms later"
        // A refusal completes at once; an alert accepted (wrongly) stays queued.
        guard let again = try? await AlertsFixture.completion(of: early, in: completions, timeout: .seconds(5)) else {
            Issue.record("100 ms early: accepted (\(timing))")
            return (tryAgain, sentUs, repliedUs)
        }
        #expect(again.resultCode == .rejected && again.reason == reason, "100 ms early: \(again.resultCode) \(again.reason?.rawValue ?? "") (\(timing))")
        // Timed from its reply (the service decided before it): accepted.
        try await sleep(untilUs: repliedUs + UInt64(tryAgain) * 1000)
        let accepted = try await f.present(alert, on: connection)
        #expect(try await accepted.read(.state) != .finished, "at \(AlertsContract.Alert.CompletionKeys.tryAgainTimeMs.name) (\(tryAgain) ms)")
        return (tryAgain, sentUs, repliedUs)
    }

    /// Five clients × 3 NORMAL alerts and one more: 16 waiting, within every rate limit.
    static func fillQueue(_ f: AlertsFixture) async throws -> [DBusConnection] {
        var clients: [DBusConnection] = []
        for _ in 0..<6 { clients.append(try await f.bus.connect()) }
        for index in 0..<16 {
            _ = try await f.present(.text("waiting \(index)"), on: clients[index / 3])
        }
        #expect(try await f.alerts.read(.queueLength) == 16)
        return clients
    }

    /// Waits until `alert` says when it ends (its audio rendered), and returns that (µs).
    static func endOf(_ alert: AlertControl) async throws -> UInt64 {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let end = try await alert.read(.endsAtMonotonicUs)
            if end > 0 { return end }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw HarnessError("\(alert.path) never said when it ends")
    }

    @Test func fullQueueBehindAPlainAlert() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let owner = try await f.bus.connect()
            defer { owner.close() }
            let current = try await f.present(.text("current") { $0.timeout = 4 }, on: owner)
            let end = try await Self.endOf(current)
            let clients = try await Self.fillQueue(f)
            defer { clients.forEach { $0.close() } }
            let before = monotonicMicroseconds()
            let tryAgain = try await Self.ruleHolds(f, .text("one too many"), on: clients[5], reason: .queueFull,
                                                    completions: completions)
            #expect(abs(Double(tryAgain) - Double(end - before) / 1000) <= Self.tolerance)
        }
    }

    @Test func fullQueueBehindASpeak() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let speech = try await f.speak([.text("Turn left at the next junction, then keep right for three hundred metres and follow the signs.")])
            let end = try await Self.endOf(speech)
            #expect(end > monotonicMicroseconds() + 2_000_000, "a speech of some seconds")
            let clients = try await Self.fillQueue(f)
            defer { clients.forEach { $0.close() } }
            try await Self.ruleHolds(f, .text("one too many"), on: clients[5], reason: .queueFull, completions: completions)
        }
    }

    /// Asked the moment a Speak is accepted, before its audio is rendered or its end is
    /// published: the refusal waits for the end and is exact.
    @Test func fullQueueJustAfterASpeakIsAccepted() async throws {
        try await Self.refusalJustAfterSpeak([.text("Turn left at the next junction, then keep right for three hundred metres.")],
                                             lastingMoreThanUs: 2_000_000, endUnknownAtFirst: true)
    }

    /// Asked the moment a Speak of several parts is accepted whose audio is longer than the
    /// service renders ahead (4 s): the refusal still waits for its true end and is exact.
    @Test func fullQueueJustAfterALongSpeakIsAccepted() async throws {
        // Paced as a device plays, so that rendering runs ahead of playback and waits.
        try await Self.refusalJustAfterSpeak([
            .text("Turn left."),
            .text("Then keep right for three hundred metres, and after the bridge keep left for the motorway towards the north."),
            .text("Then straight on."),
        ], lastingMoreThanUs: 6_000_000, arguments: ["--output-pace", "realtime"])
    }

    /// With 16 alerts waiting, an EMERGENCY Speak of `chunks` preempts the current alert;
    /// one more alert asked for at once is refused with a try-again time that is never
    /// early and at most 250 ms late against the speech's end.
    static func refusalJustAfterSpeak(_ chunks: [SpeechChunk], lastingMoreThanUs: UInt64, endUnknownAtFirst: Bool = false,
                                      arguments: [String] = []) async throws {
        try await AlertsFixture.with(arguments: arguments) { f in
            let completions = try await f.completions()
            let owner = try await f.bus.connect()
            defer { owner.close() }
            _ = try await f.present(.text("current") { $0.timeout = 10 }, on: owner)
            let clients = try await Self.fillQueue(f)
            defer { clients.forEach { $0.close() } }
            // It preempts the current alert; the 16 stay waiting.
            let speech = try await f.speak(chunks, SpeechOptions(priority: .emergency), on: owner)
            if endUnknownAtFirst {
                #expect(try await speech.read(.endsAtMonotonicUs) == 0, "asked before the end is known")
            }
            let told = try await Self.timedRuleHolds(f, .text("one too many"), on: clients[5], reason: .queueFull,
                                                     completions: completions)
            let before = told.sentUs
            let end = try await Self.endOf(speech)
            #expect(end > before + lastingMoreThanUs, "a speech of more than \(lastingMoreThanUs / 1000) ms: \((end - before) / 1000) ms")
            // Counted from the decision, which waited for the end to be known and came before
            // the reply: a retry at the time it names is never late, nor earlier than the
            // reply's own delay allows.
            let early = Double(end - before) / 1000 - Double(told.ms)
            let replyMs = Double(told.repliedUs - before) / 1000
            #expect(early >= -Self.tolerance && early <= replyMs + Self.tolerance,
                    "\(told.ms) ms against \((end - before) / 1000) ms from the request, answered after \(replyMs) ms")
        }
    }

    @Test func fullQueueBehindAnAlertWhoseAudioOutlastsItsTimeout() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let presentedUs = monotonicMicroseconds()
            let long = try await f.present(.text("Road works") {
                $0.timeout = 3
                $0.audio = [.text("Road works ahead for the next five kilometres. Expect delays and keep to the right lane.")]
            })
            let end = try await Self.endOf(long)
            #expect(end > presentedUs + 3_500_000, "the audio outlasts the 3 s timeout")
            let clients = try await Self.fillQueue(f)
            defer { clients.forEach { $0.close() } }
            try await Self.ruleHolds(f, .text("one too many"), on: clients[5], reason: .queueFull, completions: completions)
        }
    }

    @Test func fullQueueBehindAnAlertWithButtons() async throws {
        try await AlertsFixture.with { f in
            try await f.alerts.write(.buttonTimeout, 4)
            let completions = try await f.completions()
            let asking = try await f.present(.text("Reroute?") { $0.softButtons = [.labelled(1, "Yes")] })
            _ = try await Self.endOf(asking)
            let clients = try await Self.fillQueue(f)
            defer { clients.forEach { $0.close() } }
            try await Self.ruleHolds(f, .text("one too many"), on: clients[5], reason: .queueFull, completions: completions)
        }
    }

    /// The alert service with the real capture service beside it, on a file microphone of
    /// 10 s of silence paced in real time; `body` gets the fixture and a recorder's connection.
    static func withCapture(_ body: (AlertsFixture, DBusConnection) async throws -> Void) async throws {
        try await AlertsFixture.with(before: { bus, _ in
            try Data(count: 16000 * 2 * 10).write(to: bus.directory.appendingPathComponent("microphone.raw"))
        }) { f in
            let capture = try await ServiceProcess("earshot-capture", arguments: ["--device", "mic", "--pace", "realtime"],
                                                   bus: f.bus, busName: CaptureContract.busName, environment: f.devices.environment)
            defer { capture.stop() }
            let recorder = try await f.bus.connect()
            defer { recorder.close() }
            try await body(f, recorder)
            await capture.shutdown()
        }
    }

    /// A 16 kHz 16-bit pass-thru of `maxMs` started by `recorder`, with `prompt` spoken first.
    static func passThru(maxMs: UInt32, prompt: [SpeechChunk] = [], on recorder: DBusConnection) async throws -> PassThru {
        var request = AudioPassThruRequest(maxDurationMs: maxMs)
        request.initialPrompt = prompt
        return try await CaptureProxy(connection: recorder).perform(request)
    }

    /// The capture service's `EndsAtMonotonicUs` (0: nothing records, or not known yet).
    static func captureEndsAt(_ f: AlertsFixture) async throws -> UInt64 {
        try await CaptureProxy(connection: f.client).read(.endsAtMonotonicUs)
    }

    /// While a pass-thru's prompt is spoken, capture-active counts the prompt too: the
    /// pass-thru's end is the prompt's end, the recording's start and its MaxDuration.
    @Test func aPromptingPassThruCountsThePrompt() async throws {
        try await Self.withCapture { f, recorder in
            let completions = try await f.completions()
            let passThru = try await Self.passThru(maxMs: 1500, prompt: [.text("Please say the name of your destination after the tone.")],
                                                   on: recorder)
            let control = CaptureProxy(connection: f.client).passThru(at: passThru.path)
            // Wait until capture knows when the prompt ends, while it still prompts.
            var endsAt: UInt64 = 0
            let deadline = ContinuousClock.now + .seconds(10)
            while endsAt == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                endsAt = try await Self.captureEndsAt(f)
            }
            #expect(try await control.read(.state) == .prompting)
            #expect(endsAt > monotonicMicroseconds() + 1_500_000, "the prompt and then 1.5 s")
            try await Self.ruleHolds(f, .text("during the prompt") { $0.priority = .voicecom }, on: f.client,
                                     reason: .captureActive, completions: completions)
            // Once recording, the pass-thru knows its end exactly: the one told while it
            // prompted was not early, and late by at most 50 ms.
            let exact = try await control.read(.endsAtMonotonicUs)
            #expect(exact <= endsAt && endsAt - exact <= 50_000, "told \(endsAt) µs, exact \(exact) µs")
        }
    }

    /// Asked the moment a pass-thru is accepted, before its device has been read (no
    /// prompt) or its prompt rendered, the try-again time is already its end: refused 100 ms
    /// before, accepted at it, and no more than 250 ms after the pass-thru's true end.
    @Test(arguments: [false, true])
    func aPassThruJustAcceptedCountsFromTheFirstMoment(prompted: Bool) async throws {
        try await Self.withCapture { f, recorder in
            let completions = try await f.completions()
            let prompt: [SpeechChunk] = prompted ? [.text("Please say the name of your destination after the tone.")] : []
            let passThru = try await Self.passThru(maxMs: 1500, prompt: prompt, on: recorder)
            let told = try await Self.timedRuleHolds(f, .text("right away") { $0.priority = .voicecom },
                                                     on: f.client, reason: .captureActive, completions: completions)
            let endedUs = try #require(try await passThru.result.monotonicUs)
            // The service decided between the request and its reply.
            let latestUs = told.repliedUs + UInt64(told.ms) * 1000
            let earliestUs = told.sentUs + UInt64(told.ms) * 1000
            // The true end is the last read's return, later than the device's last frame
            // by however the reading thread is scheduled: within the tolerance.
            #expect(Double(latestUs) + Self.tolerance * 1000 >= Double(endedUs),
                    "told an end \((Double(endedUs) - Double(latestUs)) / 1000) ms before the true one")
            #expect(earliestUs <= endedUs + 250_000, "told an end \((Double(earliestUs) - Double(endedUs)) / 1000) ms after the true one")
        }
    }

    @Test func recordingPassThruRejectsAllButEmergency() async throws {
        try await Self.withCapture { f, recorder in
            let completions = try await f.completions()
            let passThru = try await Self.passThru(maxMs: 3000, on: recorder)
            try await Task.sleep(for: .milliseconds(500))
            let emergency = try await f.present(.text("emergency") { $0.priority = .emergency })
            #expect(try await emergency.read(.state) == .presenting)
            try await emergency.cancel()

            let alert = Alert.text("during capture") { $0.priority = .voicecom }
            // The capture service says when the pass-thru ends by its MaxDuration.
            let endsAt = try await Self.captureEndsAt(f)
            #expect(endsAt > monotonicMicroseconds())
            let sentUs = monotonicMicroseconds()
            let refused = try await f.present(alert)
            let refusedAtUs = monotonicMicroseconds()
            let rejection = try await AlertsFixture.completion(of: refused, in: completions)
            let tryAgain = try #require(rejection.tryAgainTimeMs)
            #expect(!rejection.success && rejection.resultCode == .rejected && rejection.reason == .captureActive)
            // Exact: from the moment the service decided (between the request and its reply)
            // to that end.
            let soonestMs = (Double(endsAt) - Double(refusedAtUs)) / 1000
            let latestMs = (Double(endsAt) - Double(sentUs)) / 1000
            #expect(Double(tryAgain) >= soonestMs && Double(tryAgain) <= latestMs + Self.tolerance,
                    "\(AlertsContract.Alert.CompletionKeys.tryAgainTimeMs.name) \(tryAgain), truth \(soonestMs) to \(latestMs)")
            // The rule: 100 ms before that time the same request is refused again; at it, accepted.
            try await Self.sleep(untilUs: sentUs + (UInt64(tryAgain) - 100) * 1000)
            let early = try await f.present(alert)
            #expect(try await AlertsFixture.completion(of: early, in: completions).reason == .captureActive)
            try await Self.sleep(untilUs: refusedAtUs + UInt64(tryAgain) * 1000)
            let accepted = try await f.present(alert)
            #expect(try await accepted.read(.state) == .presenting)
            // And the published end was the pass-thru's true end, by its own clock.
            let endedUs = try #require(try await passThru.result.monotonicUs)
            #expect(abs(Double(endedUs) - Double(endsAt)) / 1000 <= Self.tolerance, "ended \((Double(endedUs) - Double(endsAt)) / 1000) ms from \(AlertsContract.Alert.endsAtMonotonicUs.name)")
        }
    }
}
