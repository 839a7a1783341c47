import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

/// Presentation on the bus: one at a time in queue order, completions, user actions.
@Suite struct AlertPresentationTests {
    private typealias Keys = AlertsContract.Manager.Keys
    private typealias Button = AlertsContract.Manager.SoftButtonKeys

    static let buttons: [Alert.SoftButton] = [.labelled(1, "Answer"), .labelled(2, "Decline")]

    @Test func oneAtATimeInQueueOrderWithCompletions() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let others = [try await f.bus.connect(), try await f.bus.connect()]
            defer { others.forEach { $0.close() } }
            let first = try await f.present(.text("first"))
            let second = try await f.present(.text("second") { $0.softButtons = Self.buttons }, on: others[0])
            let third = try await f.present(.text("third") { $0.timeout = 3 }, on: others[1])
            #expect(try await f.alerts.read(.current) == first.path)
            #expect(try await f.alerts.read(.queueLength) == 2)
            #expect(try await first.read(.state) == .presenting)
            #expect(try await second.read(.state) == .queued)

            // A queued alert's buttons cannot be pressed yet.
            await expectDBusError(EarshotErrorName.rejected.name) { try await second.pressButton(1) }

            try await first.dismiss()
            let one = try await AlertsFixture.completion(of: first, in: completions)
            #expect(one.success && one.resultCode == .success && one.reason == .dismissed)
            #expect(try await f.alerts.read(.current) == second.path)
            #expect(try await f.alerts.read(.queueLength) == 1)

            await expectDBusError(EarshotErrorName.invalidData.name) { try await second.pressButton(9) }
            try await second.pressButton(2)
            let two = try await AlertsFixture.completion(of: second, in: completions)
            #expect(two.success && two.resultCode == .success && two.reason == .button)
            #expect(two.pressedButton == 2)
            #expect(try await second.read(.resultCode) == .success)

            // The last one times out on its own after its 3 s.
            let started = ContinuousClock.now
            let three = try await AlertsFixture.completion(of: third, in: completions)
            let waited = ContinuousClock.now - started
            #expect(three.success && three.reason == .timeout)
            #expect(waited > .milliseconds(2500) && waited < .milliseconds(4500))
            #expect(try await f.alerts.read(.current) == nil)
            #expect(try await f.alerts.read(.queueLength) == 0)
        }
    }

    /// SDL's soft-button actions: KEEP_CONTEXT reports the press and keeps the alert up (its
    /// timeout started anew); STEAL_FOCUS reports it and ends the alert asking for focus.
    @Test func buttonActionsFollowSDL() async throws {
        try await AlertsFixture.with { f in
            try await f.alerts.write(.buttonTimeout, 3)
            let completions = try await f.completions()
            let alert = try await f.present(.text("Traffic ahead") {
                $0.softButtons = [.labelled(1, "OK"), .labelled(2, "Details", .keepContext), .labelled(3, "Open app", .stealFocus)]
            })
            let presses = Arrivals(try await alert.buttonPresses())
            try await Task.sleep(for: .seconds(2))
            try await alert.pressButton(2)
            #expect(await presses.next(within: .seconds(5)) == 2)
            // Past the first 3 s the alert is still up: the press started its timeout anew.
            try await Task.sleep(for: .milliseconds(1800))
            #expect(try await alert.read(.state) == .presenting)

            try await alert.pressButton(3)
            #expect(await presses.next(within: .seconds(5)) == 3)
            let end = try await AlertsFixture.completion(of: alert, in: completions)
            #expect(end.success && end.reason == .button)
            #expect(end.pressedButton == 3 && end.focusRequested)

            // KEEP_CONTEXT alone: the alert ends by its (restarted) timeout.
            let second = try await f.present(.text("Again") { $0.softButtons = [.labelled(2, "Details", .keepContext)] })
            try await Task.sleep(for: .seconds(1))
            try await second.pressButton(2)
            let pressedAt = ContinuousClock.now
            let timedOut = try await AlertsFixture.completion(of: second, in: completions)
            let after = ContinuousClock.now - pressedAt
            #expect(timedOut.reason == .timeout && !timedOut.focusRequested)
            #expect(after > .milliseconds(2500) && after < .milliseconds(4500), "ended \(after) after the press")
        }
    }

    @Test func higherPriorityPreempts() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let low = try await f.present(.text("low"))
            let high = try await f.present(.text("high") { $0.priority = .emergency })
            let preempted = try await AlertsFixture.completion(of: low, in: completions)
            #expect(!preempted.success && preempted.resultCode == .aborted && preempted.reason == .preempted)
            #expect(try await f.alerts.read(.current) == high.path)
        }
    }

    @Test func cancelWhileQueuedAndWhilePresented() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let presented = try await f.present(.text("one"))
            let queued = try await f.present(.text("two"))
            let third = try await f.present(.text("three"))
            try await queued.cancel()
            let removed = try await AlertsFixture.completion(of: queued, in: completions)
            #expect(!removed.success && removed.resultCode == .aborted && removed.reason == .cancelled)
            #expect(try await f.alerts.read(.queueLength) == 1)
            try await presented.cancel()
            let dismissed = try await AlertsFixture.completion(of: presented, in: completions)
            #expect(dismissed.resultCode == .aborted && dismissed.reason == .cancelled)
            #expect(try await f.alerts.read(.current) == third.path)
            await expectDBusError(EarshotErrorName.rejected.name) { try await presented.cancel() }
            // Cancel is the owner's.
            let stranger = try await f.bus.connect()
            defer { stranger.close() }
            await expectDBusError(EarshotErrorName.disallowed.name) { try await f.alerts(on: stranger).alert(at: third.path).cancel() }
        }
    }

    @Test func ownerLeavingEndsItsAlertsUnlessTheyOutliveIt() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let owner = try await f.bus.connect()
            let bound = try await f.present(.text("bound"), on: owner)
            let free = try await f.present(.text("free") { $0.outliveOwner = true }, on: owner)
            owner.close()
            let ended = try await AlertsFixture.completion(of: bound, in: completions)
            #expect(ended.resultCode == .aborted && ended.reason == .ownerVanished)
            #expect(try await f.alerts.read(.current) == free.path)
        }
    }

    @Test func layoutsForZeroToThreeLines() async throws {
        try await AlertsFixture.with { f in
            var texts = Alert(text: "Fuel low", secondaryText: "12 km left")
            texts.tertiaryText = "Station in 3 km"
            let expected: [UInt32: [String]] = [
                3: ["Fuel low", "12 km left", "Station in 3 km"],
                2: ["Fuel low", "12 km left - Station in 3 km"],
                1: ["Fuel low - 12 km left - Station in 3 km"],
                0: [],
            ]
            for lines in [UInt32(3), 2, 1, 0] {
                try await f.alerts.write(.displayLines, lines)
                let alert = try await f.present(texts)
                #expect(try await f.alerts.alert(at: alert.path).read(.lines) == expected[lines]!, "\(AlertsContract.Manager.displayLines.name) \(lines)")
                try await alert.cancel()
            }
            let capabilities = try await f.alerts.read(.capabilities)
            #expect(capabilities[AlertsContract.Manager.CapabilityKeys.displayLines.name] == .uint32(0))
            #expect(capabilities[AlertsContract.Manager.CapabilityKeys.maxSoftButtons.name] == .uint32(4))
            await expectDBusError(EarshotErrorName.invalidData.name) { try await f.alerts.write(.displayLines, 4) }
            try await f.alerts.write(.defaultTimeout, 42)
            #expect(try await f.alerts.read(.defaultTimeout) == 10)
        }
    }

    @Test func missingFilesGiveWarningsOrFileNotFound() async throws {
        try await AlertsFixture.with { f in
            let completions = try await f.completions()
            let withIcon = try await f.present(.text("icon") { $0.icon = "/nonexistent/icon.png"; $0.timeout = 3 })
            try await withIcon.dismiss()
            let iconDone = try await AlertsFixture.completion(of: withIcon, in: completions)
            #expect(iconDone.success && iconDone.resultCode == .warnings)
            #expect(iconDone.warnings.contains { $0.hasPrefix("Icon:") })

            let audio: [SpeechChunk] = [.file("/nonexistent/a.wav")]
            let noText = try await f.present(Alert(audio: audio))
            let failed = try await AlertsFixture.completion(of: noText, in: completions)
            #expect(!failed.success && failed.resultCode == .fileNotFound)
            #expect(try await noText.read(.resultCode) == .fileNotFound)

            let withText = try await f.present(Alert(text: "text", audio: audio))
            try await withText.dismiss()
            let skipped = try await AlertsFixture.completion(of: withText, in: completions)
            #expect(skipped.success && skipped.resultCode == .warnings)
            #expect(skipped.warnings.contains { $0.contains("/nonexistent/a.wav") })
        }
    }

    /// Requests the client refuses to send, sent raw.
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
                await expectDBusError(name) { try await f.present(raw: alert) }
            }
            let (length, current) = (try await f.alerts.read(.queueLength), try await f.alerts.read(.current))
            #expect(length == 0 && current == nil)
        }
    }
}
