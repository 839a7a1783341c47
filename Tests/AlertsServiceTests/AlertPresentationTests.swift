import ContractCore
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

/// Presentation on the bus: one at a time in queue order, completions, user actions.
@Suite struct AlertPresentationTests {
    private typealias Manager = AlertsContract.Manager
    private typealias Keys = AlertsContract.Manager.Keys
    private typealias Button = AlertsContract.Manager.SoftButtonKeys
    private typealias Alert = AlertsContract.Alert

    static let buttons: DBusValue = .vardicts([[Button.id.name: .uint16(1), Button.text.name: .string("Answer")],
                                               [Button.id.name: .uint16(2), Button.text.name: .string("Decline")]])

    @Test func oneAtATimeInQueueOrderWithCompletions() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let others = [try await f.bus.connect(), try await f.bus.connect()]
            defer { others.forEach { $0.close() } }
            let first = try await f.present([Keys.text.name: .string("first")])
            let second = try await f.present([Keys.text.name: .string("second"), Keys.softButtons.name: Self.buttons], on: others[0])
            let third = try await f.present([Keys.text.name: .string("third"), Keys.timeout.name: .double(3)], on: others[1])
            #expect(try await f.property(Manager.current) == .objectPath(first))
            #expect(try await f.property(Manager.queueLength) == .uint32(2))
            #expect(try await f.property(Alert.state, path: first) == .string("presenting"))
            #expect(try await f.property(Alert.state, path: second) == .string("queued"))

            // A queued alert's buttons cannot be pressed yet.
            await expectDBusError(EarshotErrorName.rejected.name) { try await f.call(Alert.pressButton, path: second, [.uint16(1)]) }

            try await f.call(Alert.dismiss, path: first)
            let one = try await AlertsFixture.completion(of: first, in: completions)
            #expect(one.success && one.resultCode == "SUCCESS" && one.reason == "dismissed")
            #expect(try await f.property(Manager.current) == .objectPath(second))
            #expect(try await f.property(Manager.queueLength) == .uint32(1))

            await expectDBusError(EarshotErrorName.invalidData.name) { try await f.call(Alert.pressButton, path: second, [.uint16(9)]) }
            try await f.call(Alert.pressButton, path: second, [.uint16(2)])
            let two = try await AlertsFixture.completion(of: second, in: completions)
            #expect(two.success && two.resultCode == "SUCCESS" && two.reason == "button")
            #expect(two.info[Alert.CompletionKeys.pressedButton.name] == .uint16(2))
            #expect(try await f.property(Alert.resultCode, path: second) == .string("SUCCESS"))

            // The last one times out on its own after its 3 s.
            let started = ContinuousClock.now
            let three = try await AlertsFixture.completion(of: third, in: completions)
            let waited = ContinuousClock.now - started
            #expect(three.success && three.reason == "timeout")
            #expect(waited > .milliseconds(2500) && waited < .milliseconds(4500))
            #expect(try await f.property(Manager.current) == .objectPath(.root))
            #expect(try await f.property(Manager.queueLength) == .uint32(0))
        }
    }

    /// SDL's soft-button actions: KEEP_CONTEXT reports the press and keeps the alert up (its
    /// timeout started anew); STEAL_FOCUS reports it and ends the alert asking for focus.
    @Test func buttonActionsFollowSDL() async throws {
        try await AlertsFixture.with { f in
            try await f.setProperty(Manager.buttonTimeout, .double(3))
            let completions = try await f.completions()
            let presses = try await f.client.subscribe(MatchRule(sender: AlertsFixture.busName, interface: AlertsFixture.alertInterface,
                                                                 member: Alert.buttonPressed.name))
            let alert = try await f.present([Keys.text.name: .string("Traffic ahead"), Keys.softButtons.name: .vardicts([
                [Button.id.name: .uint16(1), Button.text.name: .string("OK")],
                [Button.id.name: .uint16(2), Button.text.name: .string("Details"), Button.systemAction.name: .string("KEEP_CONTEXT")],
                [Button.id.name: .uint16(3), Button.text.name: .string("Open app"), Button.systemAction.name: .string("STEAL_FOCUS")],
            ])])
            try await Task.sleep(for: .seconds(2))
            try await f.call(Alert.pressButton, path: alert, [.uint16(2)])
            let kept = try #require(await presses.next(timeout: .seconds(5)))
            #expect(kept.path == alert && kept.body == [.uint16(2)])
            // Past the first 3 s the alert is still up: the press started its timeout anew.
            try await Task.sleep(for: .milliseconds(1800))
            #expect(try await f.property(Alert.state, path: alert) == .string("presenting"))

            try await f.call(Alert.pressButton, path: alert, [.uint16(3)])
            #expect(await presses.next(timeout: .seconds(5))?.body == [.uint16(3)])
            let end = try await AlertsFixture.completion(of: alert, in: completions)
            #expect(end.success && end.reason == "button")
            #expect(end.info[Alert.CompletionKeys.pressedButton.name] == .uint16(3))
            #expect(end.info[Alert.CompletionKeys.focusRequested.name] == .boolean(true))

            // KEEP_CONTEXT alone: the alert ends by its (restarted) timeout.
            let second = try await f.present([Keys.text.name: .string("Again"), Keys.softButtons.name: .vardicts([
                [Button.id.name: .uint16(2), Button.text.name: .string("Details"), Button.systemAction.name: .string("KEEP_CONTEXT")],
            ])])
            try await Task.sleep(for: .seconds(1))
            try await f.call(Alert.pressButton, path: second, [.uint16(2)])
            let pressedAt = ContinuousClock.now
            let timedOut = try await AlertsFixture.completion(of: second, in: completions)
            let after = ContinuousClock.now - pressedAt
            #expect(timedOut.reason == "timeout" && timedOut.info[Alert.CompletionKeys.focusRequested.name] == nil)
            #expect(after > .milliseconds(2500) && after < .milliseconds(4500), "ended \(after) after the press")
        }
    }

    @Test func higherPriorityPreempts() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let low = try await f.present([Keys.text.name: .string("low")])
            let high = try await f.present([Keys.text.name: .string("high"), Keys.priority.name: .string("EMERGENCY")])
            let preempted = try await AlertsFixture.completion(of: low, in: completions)
            #expect(!preempted.success && preempted.resultCode == "ABORTED" && preempted.reason == "preempted")
            #expect(try await f.property(Manager.current) == .objectPath(high))
        }
    }

    @Test func cancelWhileQueuedAndWhilePresented() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let presented = try await f.present([Keys.text.name: .string("one")])
            let queued = try await f.present([Keys.text.name: .string("two")])
            let third = try await f.present([Keys.text.name: .string("three")])
            try await f.call(Alert.cancel, path: queued)
            let removed = try await AlertsFixture.completion(of: queued, in: completions)
            #expect(!removed.success && removed.resultCode == "ABORTED" && removed.reason == "cancelled")
            #expect(try await f.property(Manager.queueLength) == .uint32(1))
            try await f.call(Alert.cancel, path: presented)
            let dismissed = try await AlertsFixture.completion(of: presented, in: completions)
            #expect(dismissed.resultCode == "ABORTED" && dismissed.reason == "cancelled")
            #expect(try await f.property(Manager.current) == .objectPath(third))
            await expectDBusError(EarshotErrorName.rejected.name) { try await f.call(Alert.cancel, path: presented) }
            // Cancel is the owner's.
            let stranger = try await f.bus.connect()
            defer { stranger.close() }
            await expectDBusError(EarshotErrorName.disallowed.name) { try await f.call(Alert.cancel, path: third, on: stranger) }
        }
    }

    @Test func ownerLeavingEndsItsAlertsUnlessTheyOutliveIt() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let owner = try await f.bus.connect()
            let bound = try await f.present([Keys.text.name: .string("bound")], on: owner)
            let free = try await f.present([Keys.text.name: .string("free"), Keys.outliveOwner.name: .boolean(true)], on: owner)
            owner.close()
            let ended = try await AlertsFixture.completion(of: bound, in: completions)
            #expect(ended.resultCode == "ABORTED" && ended.reason == "owner-vanished")
            #expect(try await f.property(Manager.current) == .objectPath(free))
        }
    }

    @Test func layoutsForZeroToThreeLines() async throws {
        try await AlertsFixture.with { f in
            let texts: [String: DBusValue] = [Keys.text.name: .string("Fuel low"), Keys.secondaryText.name: .string("12 km left"),
                                              Keys.tertiaryText.name: .string("Station in 3 km")]
            let expected: [UInt32: [String]] = [
                3: ["Fuel low", "12 km left", "Station in 3 km"],
                2: ["Fuel low", "12 km left - Station in 3 km"],
                1: ["Fuel low - 12 km left - Station in 3 km"],
                0: [],
            ]
            for lines in [UInt32(3), 2, 1, 0] {
                try await f.setProperty(Manager.displayLines, .uint32(lines))
                let alert = try await f.present(texts)
                #expect(try await f.property(Alert.lines, path: alert) == .strings(expected[lines]!), "DisplayLines \(lines)")
                try await f.call(Alert.cancel, path: alert)
            }
            let capabilities = try await f.property(Manager.capabilities)?.stringKeyedValue
            #expect(capabilities?[Manager.CapabilityKeys.displayLines.name] == .uint32(0))
            #expect(capabilities?[Manager.CapabilityKeys.maxSoftButtons.name] == .uint32(4))
            await expectDBusError(EarshotErrorName.invalidData.name) { try await f.setProperty(Manager.displayLines, .uint32(4)) }
            try await f.setProperty(Manager.defaultTimeout, .double(42))
            #expect(try await f.property(Manager.defaultTimeout) == .double(10))
        }
    }

    @Test func missingFilesGiveWarningsOrFileNotFound() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let withIcon = try await f.present([Keys.text.name: .string("icon"), Keys.icon.name: .string("/nonexistent/icon.png"),
                                                Keys.timeout.name: .double(3)])
            try await f.call(Alert.dismiss, path: withIcon)
            let iconDone = try await AlertsFixture.completion(of: withIcon, in: completions)
            #expect(iconDone.success && iconDone.resultCode == "WARNINGS")
            #expect(iconDone.warnings.contains { $0.hasPrefix("Icon:") })

            let audio = DBusValue.array(.structure([.string, .string]), [.structure([.string("FILE"), .string("/nonexistent/a.wav")])])
            let noText = try await f.present([Keys.audio.name: audio])
            let failed = try await AlertsFixture.completion(of: noText, in: completions)
            #expect(!failed.success && failed.resultCode == "FILE_NOT_FOUND")
            #expect(try await f.property(Alert.resultCode, path: noText) == .string("FILE_NOT_FOUND"))

            let withText = try await f.present([Keys.text.name: .string("text"), Keys.audio.name: audio])
            try await f.call(Alert.dismiss, path: withText)
            let skipped = try await AlertsFixture.completion(of: withText, in: completions)
            #expect(skipped.success && skipped.resultCode == "WARNINGS")
            #expect(skipped.warnings.contains { $0.contains("/nonexistent/a.wav") })
        }
    }

    @Test func badInputGetsNamedErrors() async throws {
        try await AlertsFixture.with { f in
            let cases: [(String, [String: DBusValue])] = [
                ("org.freedesktop.DBus.Error.InvalidArgs", [Keys.text.name: .uint32(1)]),
                ("org.freedesktop.DBus.Error.InvalidArgs", [Keys.text.name: .string("x"), "Colour": .string("red")]),
                (EarshotErrorName.invalidData.name, [Keys.tertiaryText.name: .string("only third")]),
                (EarshotErrorName.invalidData.name, [Keys.text.name: .string("tab\there")]),
                (EarshotErrorName.invalidData.name, [Keys.text.name: .string(String(repeating: "x", count: 501))]),
                (EarshotErrorName.invalidData.name, [Keys.text.name: .string("x"), Keys.priority.name: .string("URGENT")]),
                (EarshotErrorName.invalidData.name, [Keys.text.name: .string("x"), Keys.timeout.name: .double(-1)]),
                (EarshotErrorName.invalidData.name, [Keys.text.name: .string("x"), Keys.softButtons.name: .vardicts((1...5).map { [Button.id.name: .uint16(UInt16($0)), Button.text.name: .string("b")] })]),
                (EarshotErrorName.invalidData.name, [Keys.text.name: .string("x"), Keys.softButtons.name: .vardicts([[Button.id.name: .uint16(1), Button.text.name: .string("a")], [Button.id.name: .uint16(1), Button.text.name: .string("b")]])]),
                (EarshotErrorName.invalidData.name, [Keys.text.name: .string("x"), Keys.softButtons.name: .vardicts([[Button.id.name: .uint16(1), Button.type.name: .string("TEXT")]])]),
                (EarshotErrorName.invalidData.name, [Keys.text.name: .string("x"), Keys.softButtons.name: .vardicts([[Button.id.name: .uint16(1), Button.type.name: .string("IMAGE"), Button.text.name: .string("t")]])]),
                ("org.freedesktop.DBus.Error.InvalidArgs", [Keys.text.name: .string("x"), Keys.softButtons.name: .vardicts([[Button.text.name: .string("no id")]])]),
                (EarshotErrorName.invalidData.name, [Keys.audio.name: .array(.structure([.string, .string]), [.structure([.string("MORSE"), .string("...")])])]),
            ]
            for (name, alert) in cases {
                await expectDBusError(name) { _ = try await f.present(alert) }
            }
            let length = try await f.property(Manager.queueLength)
            let current = try await f.property(Manager.current)
            #expect(length == .uint32(0))
            #expect(current == .objectPath(.root))
        }
    }
}
