import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

/// Presentation on the bus: one at a time in queue order, completions, user actions.
@Suite struct AlertPresentationTests {
    static let buttons: DBusValue = .vardicts([["Id": .uint16(1), "Text": .string("Answer")],
                                               ["Id": .uint16(2), "Text": .string("Decline")]])

    @Test func oneAtATimeInQueueOrderWithCompletions() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let others = [try await f.bus.connect(), try await f.bus.connect()]
            defer { others.forEach { $0.close() } }
            let first = try await f.present(["Text": .string("first")])
            let second = try await f.present(["Text": .string("second"), "SoftButtons": Self.buttons], on: others[0])
            let third = try await f.present(["Text": .string("third"), "Timeout": .double(3)], on: others[1])
            #expect(try await f.property("Current") == .objectPath(first))
            #expect(try await f.property("QueueLength") == .uint32(2))
            #expect(try await f.property("State", path: first) == .string("presenting"))
            #expect(try await f.property("State", path: second) == .string("queued"))

            // A queued alert's buttons cannot be pressed yet.
            await expectDBusError("org.earshot.Error.Rejected") { try await f.call("PressButton", path: second, [.uint16(1)]) }

            try await f.call("Dismiss", path: first)
            let one = try await AlertsFixture.completion(of: first, in: completions)
            #expect(one.success && one.resultCode == "SUCCESS" && one.reason == "dismissed")
            #expect(try await f.property("Current") == .objectPath(second))
            #expect(try await f.property("QueueLength") == .uint32(1))

            await expectDBusError("org.earshot.Error.InvalidData") { try await f.call("PressButton", path: second, [.uint16(9)]) }
            try await f.call("PressButton", path: second, [.uint16(2)])
            let two = try await AlertsFixture.completion(of: second, in: completions)
            #expect(two.success && two.resultCode == "SUCCESS" && two.reason == "button")
            #expect(two.info["PressedButton"] == .uint16(2))
            #expect(try await f.property("ResultCode", path: second) == .string("SUCCESS"))

            // The last one times out on its own after its 3 s.
            let started = ContinuousClock.now
            let three = try await AlertsFixture.completion(of: third, in: completions)
            let waited = ContinuousClock.now - started
            #expect(three.success && three.reason == "timeout")
            #expect(waited > .milliseconds(2500) && waited < .milliseconds(4500))
            #expect(try await f.property("Current") == .objectPath(.root))
            #expect(try await f.property("QueueLength") == .uint32(0))
        }
    }

    /// SDL's soft-button actions: KEEP_CONTEXT reports the press and keeps the alert up (its
    /// timeout started anew); STEAL_FOCUS reports it and ends the alert asking for focus.
    @Test func buttonActionsFollowSDL() async throws {
        try await AlertsFixture.with { f in
            try await f.setProperty("ButtonTimeout", .double(3))
            let completions = try await f.completions()
            let presses = try await f.client.subscribe(MatchRule(sender: AlertsFixture.busName, interface: "org.earshot.Alerts1.Alert",
                                                                 member: "ButtonPressed"))
            let alert = try await f.present(["Text": .string("Traffic ahead"), "SoftButtons": .vardicts([
                ["Id": .uint16(1), "Text": .string("OK")],
                ["Id": .uint16(2), "Text": .string("Details"), "SystemAction": .string("KEEP_CONTEXT")],
                ["Id": .uint16(3), "Text": .string("Open app"), "SystemAction": .string("STEAL_FOCUS")],
            ])])
            try await Task.sleep(for: .seconds(2))
            try await f.call("PressButton", path: alert, [.uint16(2)])
            let kept = try #require(await presses.next(timeout: .seconds(5)))
            #expect(kept.path == alert && kept.body == [.uint16(2)])
            // Past the first 3 s the alert is still up: the press started its timeout anew.
            try await Task.sleep(for: .milliseconds(1800))
            #expect(try await f.property("State", path: alert) == .string("presenting"))

            try await f.call("PressButton", path: alert, [.uint16(3)])
            #expect(await presses.next(timeout: .seconds(5))?.body == [.uint16(3)])
            let end = try await AlertsFixture.completion(of: alert, in: completions)
            #expect(end.success && end.reason == "button")
            #expect(end.info["PressedButton"] == .uint16(3))
            #expect(end.info["FocusRequested"] == .boolean(true))

            // KEEP_CONTEXT alone: the alert ends by its (restarted) timeout.
            let second = try await f.present(["Text": .string("Again"), "SoftButtons": .vardicts([
                ["Id": .uint16(2), "Text": .string("Details"), "SystemAction": .string("KEEP_CONTEXT")],
            ])])
            try await Task.sleep(for: .seconds(1))
            try await f.call("PressButton", path: second, [.uint16(2)])
            let pressedAt = ContinuousClock.now
            let timedOut = try await AlertsFixture.completion(of: second, in: completions)
            let after = ContinuousClock.now - pressedAt
            #expect(timedOut.reason == "timeout" && timedOut.info["FocusRequested"] == nil)
            #expect(after > .milliseconds(2500) && after < .milliseconds(4500), "ended \(after) after the press")
        }
    }

    @Test func higherPriorityPreempts() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let low = try await f.present(["Text": .string("low")])
            let high = try await f.present(["Text": .string("high"), "Priority": .string("EMERGENCY")])
            let preempted = try await AlertsFixture.completion(of: low, in: completions)
            #expect(!preempted.success && preempted.resultCode == "ABORTED" && preempted.reason == "preempted")
            #expect(try await f.property("Current") == .objectPath(high))
        }
    }

    @Test func cancelWhileQueuedAndWhilePresented() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let presented = try await f.present(["Text": .string("one")])
            let queued = try await f.present(["Text": .string("two")])
            let third = try await f.present(["Text": .string("three")])
            try await f.call("Cancel", path: queued)
            let removed = try await AlertsFixture.completion(of: queued, in: completions)
            #expect(!removed.success && removed.resultCode == "ABORTED" && removed.reason == "cancelled")
            #expect(try await f.property("QueueLength") == .uint32(1))
            try await f.call("Cancel", path: presented)
            let dismissed = try await AlertsFixture.completion(of: presented, in: completions)
            #expect(dismissed.resultCode == "ABORTED" && dismissed.reason == "cancelled")
            #expect(try await f.property("Current") == .objectPath(third))
            await expectDBusError("org.earshot.Error.Rejected") { try await f.call("Cancel", path: presented) }
            // Cancel is the owner's.
            let stranger = try await f.bus.connect()
            defer { stranger.close() }
            await expectDBusError("org.earshot.Error.Disallowed") { try await f.call("Cancel", path: third, on: stranger) }
        }
    }

    @Test func ownerLeavingEndsItsAlertsUnlessTheyOutliveIt() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let owner = try await f.bus.connect()
            let bound = try await f.present(["Text": .string("bound")], on: owner)
            let free = try await f.present(["Text": .string("free"), "OutliveOwner": .boolean(true)], on: owner)
            owner.close()
            let ended = try await AlertsFixture.completion(of: bound, in: completions)
            #expect(ended.resultCode == "ABORTED" && ended.reason == "owner-vanished")
            #expect(try await f.property("Current") == .objectPath(free))
        }
    }

    @Test func layoutsForZeroToThreeLines() async throws {
        try await AlertsFixture.with { f in
            let texts: [String: DBusValue] = ["Text": .string("Fuel low"), "SecondaryText": .string("12 km left"),
                                              "TertiaryText": .string("Station in 3 km")]
            let expected: [UInt32: [String]] = [
                3: ["Fuel low", "12 km left", "Station in 3 km"],
                2: ["Fuel low", "12 km left - Station in 3 km"],
                1: ["Fuel low - 12 km left - Station in 3 km"],
                0: [],
            ]
            for lines in [UInt32(3), 2, 1, 0] {
                try await f.setProperty("DisplayLines", .uint32(lines))
                let alert = try await f.present(texts)
                #expect(try await f.property("Lines", path: alert) == .strings(expected[lines]!), "DisplayLines \(lines)")
                try await f.call("Cancel", path: alert)
            }
            let capabilities = try await f.property("Capabilities")?.stringKeyedValue
            #expect(capabilities?["DisplayLines"] == .uint32(0))
            #expect(capabilities?["MaxSoftButtons"] == .uint32(4))
            await expectDBusError("org.earshot.Error.InvalidData") { try await f.setProperty("DisplayLines", .uint32(4)) }
            try await f.setProperty("DefaultTimeout", .double(42))
            #expect(try await f.property("DefaultTimeout") == .double(10))
        }
    }

    @Test func missingFilesGiveWarningsOrFileNotFound() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let withIcon = try await f.present(["Text": .string("icon"), "Icon": .string("/nonexistent/icon.png"),
                                                "Timeout": .double(3)])
            try await f.call("Dismiss", path: withIcon)
            let iconDone = try await AlertsFixture.completion(of: withIcon, in: completions)
            #expect(iconDone.success && iconDone.resultCode == "WARNINGS")
            #expect(iconDone.warnings.contains { $0.hasPrefix("Icon:") })

            let audio = DBusValue.array(.structure([.string, .string]), [.structure([.string("FILE"), .string("/nonexistent/a.wav")])])
            let noText = try await f.present(["Audio": audio])
            let failed = try await AlertsFixture.completion(of: noText, in: completions)
            #expect(!failed.success && failed.resultCode == "FILE_NOT_FOUND")
            #expect(try await f.property("ResultCode", path: noText) == .string("FILE_NOT_FOUND"))

            let withText = try await f.present(["Text": .string("text"), "Audio": audio])
            try await f.call("Dismiss", path: withText)
            let skipped = try await AlertsFixture.completion(of: withText, in: completions)
            #expect(skipped.success && skipped.resultCode == "WARNINGS")
            #expect(skipped.warnings.contains { $0.contains("/nonexistent/a.wav") })
        }
    }

    @Test func badInputGetsNamedErrors() async throws {
        try await AlertsFixture.with { f in
            let cases: [(String, [String: DBusValue])] = [
                ("org.freedesktop.DBus.Error.InvalidArgs", ["Text": .uint32(1)]),
                ("org.freedesktop.DBus.Error.InvalidArgs", ["Text": .string("x"), "Colour": .string("red")]),
                ("org.earshot.Error.InvalidData", ["TertiaryText": .string("only third")]),
                ("org.earshot.Error.InvalidData", ["Text": .string("tab\there")]),
                ("org.earshot.Error.InvalidData", ["Text": .string(String(repeating: "x", count: 501))]),
                ("org.earshot.Error.InvalidData", ["Text": .string("x"), "Priority": .string("URGENT")]),
                ("org.earshot.Error.InvalidData", ["Text": .string("x"), "Timeout": .double(-1)]),
                ("org.earshot.Error.InvalidData", ["Text": .string("x"), "SoftButtons": .vardicts((1...5).map { ["Id": .uint16(UInt16($0)), "Text": .string("b")] })]),
                ("org.earshot.Error.InvalidData", ["Text": .string("x"), "SoftButtons": .vardicts([["Id": .uint16(1), "Text": .string("a")], ["Id": .uint16(1), "Text": .string("b")]])]),
                ("org.earshot.Error.InvalidData", ["Text": .string("x"), "SoftButtons": .vardicts([["Id": .uint16(1), "Type": .string("TEXT")]])]),
                ("org.earshot.Error.InvalidData", ["Text": .string("x"), "SoftButtons": .vardicts([["Id": .uint16(1), "Type": .string("IMAGE"), "Text": .string("t")]])]),
                ("org.freedesktop.DBus.Error.InvalidArgs", ["Text": .string("x"), "SoftButtons": .vardicts([["Text": .string("no id")]])]),
                ("org.earshot.Error.InvalidData", ["Audio": .array(.structure([.string, .string]), [.structure([.string("MORSE"), .string("...")])])]),
            ]
            for (name, alert) in cases {
                await expectDBusError(name) { _ = try await f.present(alert) }
            }
            let length = try await f.property("QueueLength")
            let current = try await f.property("Current")
            #expect(length == .uint32(0))
            #expect(current == .objectPath(.root))
        }
    }
}
