import AlertsCore
import Testing

/// The queue with a test clock: every time is a millisecond count passed in.
@Suite struct AlertQueueTests {
    static func entry(_ id: UInt64, owner: String = ":1.1", _ priority: AlertPriority = .normal, durationMs: UInt64 = 5000,
                      buttons: Bool = false, audio: Bool = false) -> AlertQueue.Entry {
        AlertQueue.Entry(id: id, owner: owner, priority: priority, durationMs: durationMs, hasButtons: buttons, hasAudio: audio)
    }

    @Test func oneAtATimeInPriorityThenArrivalOrder() {
        var queue = AlertQueue()
        #expect(queue.submit(Self.entry(1), now: 0, captureRemainingMs: nil) == .accepted([.presented(1)]))
        #expect(queue.submit(Self.entry(2, owner: ":1.2"), now: 10, captureRemainingMs: nil) == .accepted([]))
        #expect(queue.submit(Self.entry(3, owner: ":1.3"), now: 20, captureRemainingMs: nil) == .accepted([]))
        // Equal priority never preempts: the others wait their turn.
        #expect(queue.currentID == 1)
        #expect(queue.waitingCount == 2)
        #expect(queue.advance(now: 4999) == [])
        #expect(queue.advance(now: 5000) == [.completed(1, AlertEnd(.timeout)), .presented(2)])
        #expect(queue.advance(now: 10000) == [.completed(2, AlertEnd(.timeout)), .presented(3)])
        #expect(queue.advance(now: 15000) == [.completed(3, AlertEnd(.timeout))])
        #expect(queue.currentID == nil)
        #expect(queue.nextDeadline == nil)
    }

    @Test func higherPriorityWaitsAheadOfLowerOnes() {
        var queue = AlertQueue()
        _ = queue.submit(Self.entry(1, .navigation), now: 0, captureRemainingMs: nil)
        _ = queue.submit(Self.entry(2, owner: ":1.2", .normal), now: 1, captureRemainingMs: nil)
        _ = queue.submit(Self.entry(3, owner: ":1.3", .communication), now: 2, captureRemainingMs: nil)
        _ = queue.submit(Self.entry(4, owner: ":1.4", .communication), now: 3, captureRemainingMs: nil)
        #expect(queue.advance(now: 5000) == [.completed(1, AlertEnd(.timeout)), .presented(3)])
        #expect(queue.advance(now: 10000) == [.completed(3, AlertEnd(.timeout)), .presented(4)])
        #expect(queue.advance(now: 15000) == [.completed(4, AlertEnd(.timeout)), .presented(2)])
    }

    @Test func higherPriorityPreemptsThePresentedAlert() {
        var queue = AlertQueue()
        _ = queue.submit(Self.entry(1, .normal), now: 0, captureRemainingMs: nil)
        _ = queue.submit(Self.entry(2, owner: ":1.2", .normal), now: 1, captureRemainingMs: nil)
        let submitted = queue.submit(Self.entry(3, owner: ":1.3", .emergency), now: 100, captureRemainingMs: nil)
        #expect(submitted == .accepted([.completed(1, AlertEnd(.preempted)), .presented(3)]))
        #expect(AlertEnd(.preempted).resultCode(warnings: false) == .aborted)
        #expect(!AlertEnd(.preempted).success)
        // The preempted alert is gone; the waiting one comes next.
        #expect(queue.advance(now: 5100) == [.completed(3, AlertEnd(.timeout)), .presented(2)])
    }

    @Test func alertWithAudioStaysUntilItsAudioEndsIfThatIsLater() {
        var queue = AlertQueue()
        _ = queue.submit(Self.entry(1, audio: true), now: 0, captureRemainingMs: nil)
        #expect(queue.nextDeadline == nil)
        #expect(queue.advance(now: 6000) == [])
        #expect(queue.audioEnded(1, now: 7000) == [.completed(1, AlertEnd(.timeout))])

        _ = queue.submit(Self.entry(2, audio: true), now: 10000, captureRemainingMs: nil)
        #expect(queue.audioEnded(2, now: 11000) == [])
        #expect(queue.nextDeadline == 15000)
        #expect(queue.advance(now: 15000) == [.completed(2, AlertEnd(.timeout))])
    }

    @Test func speechOnlyEndsWithItsAudio() {
        var queue = AlertQueue()
        _ = queue.submit(Self.entry(1, durationMs: 0, audio: true), now: 0, captureRemainingMs: nil)
        #expect(queue.advance(now: 100) == [])
        #expect(queue.audioEnded(1, now: 1234) == [.completed(1, AlertEnd(.timeout))])
    }

    @Test func buttonsKeepTheAlertUntilPressedOrButtonTimeout() {
        var queue = AlertQueue()
        _ = queue.submit(Self.entry(1, durationMs: 60000, buttons: true, audio: true), now: 0, captureRemainingMs: nil)
        // Audio ending does not dismiss an alert with buttons.
        #expect(queue.audioEnded(1, now: 2000) == [])
        #expect(queue.nextDeadline == 60000)
        #expect(queue.pressButton(1, button: 7, now: 3000) == [.completed(1, AlertEnd(.button, pressedButton: 7))])

        _ = queue.submit(Self.entry(2, durationMs: 60000, buttons: true), now: 4000, captureRemainingMs: nil)
        #expect(queue.advance(now: 63999) == [])
        #expect(queue.advance(now: 64000) == [.completed(2, AlertEnd(.timeout))])
    }

    @Test func anAlertEndsWhenItsAudioHasPlayedNotWhenPredicted() {
        var queue = AlertQueue()
        // A Speak (no timeout): its predicted end is published, but the alert ends when the
        // device reports the last frame played, however late (an underrun, a slow output).
        _ = queue.submit(Self.entry(1, durationMs: 0, audio: true), now: 0, captureRemainingMs: nil)
        #expect(queue.nextDeadline == nil && queue.expectedEnd == nil)  // not rendered yet
        queue.audioWillEnd(1, playedOut: 2000)
        #expect(queue.expectedEnd == 2000 + AlertQueue.playedOutMarginMs)
        #expect(queue.advance(now: 2050) == [])
        #expect(queue.advance(now: 2600) == [])
        #expect(queue.audioEnded(1, now: 2600) == [.completed(1, AlertEnd(.timeout))])

        // A device that stopped playing is given up past the grace.
        _ = queue.submit(Self.entry(3, durationMs: 0, audio: true), now: 3000, captureRemainingMs: nil)
        queue.audioWillEnd(3, playedOut: 4000)
        #expect(queue.nextDeadline == 4000 + AlertQueue.stalledAudioGraceMs)
        #expect(queue.advance(now: 4000 + AlertQueue.stalledAudioGraceMs - 1) == [])
        #expect(queue.advance(now: 4000 + AlertQueue.stalledAudioGraceMs) == [.completed(3, AlertEnd(.timeout))])

        // A device that drains faster than real time (a file): the alert stays as long as
        // its audio would have played.
        _ = queue.submit(Self.entry(4, durationMs: 0, audio: true), now: 8000, captureRemainingMs: nil)
        queue.audioWillEnd(4, playedOut: 10000)
        #expect(queue.audioEnded(4, now: 8100) == [])
        #expect(queue.advance(now: 10049) == [])
        #expect(queue.advance(now: 10050) == [.completed(4, AlertEnd(.timeout))])
    }

    @Test func aPredictedAudioEndIsTheQueueFullTryAgain() {
        var queue = AlertQueue()
        // An alert whose audio outlasts its 3 s timeout.
        _ = queue.submit(Self.entry(2, durationMs: 3000, audio: true), now: 3000, captureRemainingMs: nil)
        queue.audioWillEnd(2, playedOut: 10000)
        for index in 0..<UInt64(AlertQueue.maxWaiting) {
            _ = queue.submit(Self.entry(10 + index, owner: ":1.\(10 + index)"), now: 3000, captureRemainingMs: nil)
        }
        #expect(queue.submit(Self.entry(99, owner: ":1.99"), now: 4000, captureRemainingMs: nil)
                == .rejected(AlertEnd(.queueFull, tryAgainMs: 10050 - 4000)))
        #expect(queue.advance(now: 10050) == [])
        #expect(queue.audioEnded(2, now: 10400).first == .completed(2, AlertEnd(.timeout)))

        // Behind an alert with buttons: its button timeout, restarted by KEEP_CONTEXT.
        var buttons = AlertQueue()
        _ = buttons.submit(Self.entry(1, durationMs: 60000, buttons: true, audio: true), now: 0, captureRemainingMs: nil)
        buttons.audioWillEnd(1, playedOut: 2000)
        for index in 0..<UInt64(AlertQueue.maxWaiting) {
            _ = buttons.submit(Self.entry(10 + index, owner: ":1.\(10 + index)"), now: 0, captureRemainingMs: nil)
        }
        _ = buttons.pressButton(1, button: 1, action: .keepContext, now: 5000)
        #expect(buttons.submit(Self.entry(99, owner: ":1.99"), now: 6000, captureRemainingMs: nil)
                == .rejected(AlertEnd(.queueFull, tryAgainMs: 65000 - 6000)))
    }

    /// Behind a speech whose end is not known yet (its rendering slower than the service
    /// waits): never a time already passed; its timeout when that is later.
    @Test func anUnknownAudioEndNamesATimeStillToCome() {
        for (durationMs, expected) in [(UInt64(0), AlertQueue.unknownEndRetryMs), (4000, 4000 - 500)] {
            var queue = AlertQueue()
            _ = queue.submit(Self.entry(1, durationMs: durationMs, audio: true), now: 0, captureRemainingMs: nil)
            for index in 0..<UInt64(AlertQueue.maxWaiting) {
                _ = queue.submit(Self.entry(10 + index, owner: ":1.\(10 + index)"), now: 0, captureRemainingMs: nil)
            }
            #expect(queue.expectedEnd == nil)
            #expect(queue.submit(Self.entry(99, owner: ":1.99"), now: 500, captureRemainingMs: nil)
                    == .rejected(AlertEnd(.queueFull, tryAgainMs: UInt32(expected))), "timeout \(durationMs) ms")
        }
    }

    @Test func systemActionsFollowSDL() {
        var queue = AlertQueue()
        _ = queue.submit(Self.entry(1, durationMs: 10000, buttons: true), now: 0, captureRemainingMs: nil)
        _ = queue.submit(Self.entry(2, owner: ":1.2", durationMs: 10000, buttons: true), now: 0, captureRemainingMs: nil)
        // KEEP_CONTEXT: reported, the alert stays, its timeout starts anew.
        #expect(queue.pressButton(1, button: 3, action: .keepContext, now: 8000) == [.buttonPressed(1, 3)])
        #expect(queue.currentID == 1)
        #expect(queue.nextDeadline == 18000)
        #expect(queue.advance(now: 10000) == [])
        // STEAL_FOCUS: reported, then ended with the press, asking for focus.
        var stolen = AlertEnd(.button, pressedButton: 4)
        stolen.focusRequested = true
        #expect(queue.pressButton(1, button: 4, action: .stealFocus, now: 12000) == [.buttonPressed(1, 4), .completed(1, stolen), .presented(2)])
        #expect(stolen.resultCode(warnings: false) == .success)
        // DEFAULT_ACTION: ended with the press, nothing more.
        #expect(queue.pressButton(2, button: 1, action: .defaultAction, now: 13000) == [.completed(2, AlertEnd(.button, pressedButton: 1))])
    }

    @Test func cancelWhileQueuedAndWhilePresented() {
        var queue = AlertQueue()
        _ = queue.submit(Self.entry(1), now: 0, captureRemainingMs: nil)
        _ = queue.submit(Self.entry(2, owner: ":1.2"), now: 0, captureRemainingMs: nil)
        _ = queue.submit(Self.entry(3, owner: ":1.3"), now: 0, captureRemainingMs: nil)
        #expect(queue.cancel(2, now: 10) == [.completed(2, AlertEnd(.cancelled))])
        #expect(queue.placement(of: 2) == nil)
        #expect(queue.cancel(1, now: 20) == [.completed(1, AlertEnd(.cancelled)), .presented(3)])
        #expect(queue.cancel(1, now: 30) == [])
        #expect(AlertEnd(.cancelled).resultCode(warnings: false) == .aborted)
    }

    @Test func pressAndDismissOnlyApplyToThePresentedAlert() {
        var queue = AlertQueue()
        _ = queue.submit(Self.entry(1), now: 0, captureRemainingMs: nil)
        _ = queue.submit(Self.entry(2, owner: ":1.2"), now: 0, captureRemainingMs: nil)
        #expect(queue.pressButton(2, button: 1, now: 5) == [])
        #expect(queue.dismiss(2, now: 5) == [])
        #expect(queue.dismiss(1, now: 6) == [.completed(1, AlertEnd(.dismissed)), .presented(2)])
        #expect(AlertEnd(.dismissed).resultCode(warnings: true) == .warnings)
    }

    @Test func ownerVanishingRemovesEverythingItHas() {
        var queue = AlertQueue()
        _ = queue.submit(Self.entry(1, owner: ":1.9"), now: 0, captureRemainingMs: nil)
        _ = queue.submit(Self.entry(2, owner: ":1.2"), now: 0, captureRemainingMs: nil)
        _ = queue.submit(Self.entry(3, owner: ":1.9"), now: 0, captureRemainingMs: nil)
        #expect(queue.ownerVanished(":1.9", now: 50) == [.completed(3, AlertEnd(.ownerVanished)),
                                                         .completed(1, AlertEnd(.ownerVanished)), .presented(2)])
        #expect(queue.waitingCount == 0)
    }

    @Test func alertsThatOutliveTheirOwnerStay() {
        var queue = AlertQueue()
        _ = queue.submit(AlertQueue.Entry(id: 1, owner: ":1.9", priority: .normal, durationMs: 5000, hasButtons: false,
                                          hasAudio: false, endsWithOwner: false), now: 0, captureRemainingMs: nil)
        _ = queue.submit(Self.entry(2, owner: ":1.9"), now: 0, captureRemainingMs: nil)
        #expect(queue.ownerVanished(":1.9", now: 10) == [.completed(2, AlertEnd(.ownerVanished))])
        #expect(queue.currentID == 1)
    }
}
