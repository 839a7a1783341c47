import ContractCore
import OrchestratorCore
import Testing

@Suite struct RecordJobTests {
    /// Runs a job through `events`, collecting every command.
    func run(_ events: [JobEvent]) -> (job: RecordJob, commands: [JobCommand]) {
        var job = RecordJob()
        var commands = job.start()
        for event in events { commands += job.handle(event) }
        return (job, commands)
    }

    @Test func theWholeWay() {
        let (job, commands) = run([.sessionReady, .passThruStarted(prompting: true), .recordingStarted, .framesCaptured(16000),
                                   .passThruFinished(.success, reason: "timeout"), .stored(pieceID: "p1"),
                                   .confirmationCompleted(.success, tryAgainMs: nil)])
        #expect(commands == [.activateSession, .startPassThru, .store, .presentConfirmation, .releaseSession,
                             .finish(.success, pieceID: "p1", reason: "stored and confirmed")])
        #expect(job.state == .finished)
        #expect(job.framesCaptured == 16000)
    }

    @Test func statesFollowTheEvents() {
        var job = RecordJob()
        _ = job.start()
        #expect(job.state == .preparing)
        _ = job.handle(.sessionReady)
        _ = job.handle(.passThruStarted(prompting: true))
        #expect(job.state == .prompting)
        _ = job.handle(.recordingStarted)
        #expect(job.state == .recording)
        _ = job.handle(.framesCaptured(10))
        _ = job.handle(.passThruFinished(.success, reason: "done"))
        #expect(job.state == .storing)
        _ = job.handle(.stored(pieceID: "p"))
        #expect(job.state == .confirming)
        #expect(job.pieceID == "p")
    }

    @Test func aRejectedConfirmationIsRetriedAfterTheTryAgainTime() {
        let (job, commands) = run([.sessionReady, .passThruStarted(prompting: false), .framesCaptured(10),
                                   .passThruFinished(.success, reason: "done"), .stored(pieceID: "p"),
                                   .confirmationCompleted(.rejected, tryAgainMs: 4200), .retryDue,
                                   .confirmationCompleted(.success, tryAgainMs: nil)])
        #expect(commands.contains(.scheduleRetry(afterMs: 4200)))
        #expect(commands.filter { $0 == .presentConfirmation }.count == 2)
        #expect(job.resultCode == .success)
        #expect(job.confirmationAttempts == 2)
    }

    @Test func confirmationGivesUpAfterFiveRejectionsAndKeepsThePiece() {
        var events: [JobEvent] = [.sessionReady, .passThruStarted(prompting: false), .framesCaptured(10),
                                  .passThruFinished(.success, reason: "done"), .stored(pieceID: "p")]
        for _ in 0..<RecordJob.maxConfirmationAttempts { events += [.confirmationCompleted(.rejected, tryAgainMs: 10), .retryDue] }
        let (job, commands) = run(events)
        #expect(commands.last == .finish(.warnings, pieceID: "p", reason: "stored; the confirmation could not be shown"))
        #expect(!commands.contains(.deletePiece("p")))
        #expect(job.confirmationAttempts == RecordJob.maxConfirmationAttempts)
    }

    @Test func anAbortedPassThruStoresNothing() {
        let (job, commands) = run([.sessionReady, .passThruStarted(prompting: false), .framesCaptured(500),
                                   .passThruFinished(.aborted, reason: "owner-vanished")])
        #expect(!commands.contains(.store))
        #expect(job.resultCode == .aborted)
        #expect(job.pieceID == "")
    }

    @Test func otherPassThruEndsStoreNothing() {
        for code in [ResultCode.retry, .genericError, .rejected] {
            let (job, commands) = run([.sessionReady, .passThruStarted(prompting: false), .framesCaptured(5),
                                       .passThruFinished(code, reason: "x")])
            #expect(!commands.contains(.store), "\(code)")
            #expect(job.resultCode == code)
        }
        let (empty, _) = run([.sessionReady, .passThruStarted(prompting: false), .passThruFinished(.success, reason: "x")])
        #expect(empty.resultCode == .genericError)
        let (refused, _) = run([.sessionReady, .passThruRefused(.rejected, "busy")])
        #expect(refused.resultCode == .rejected)
    }

    @Test func aPassThruRejectedByAnotherIsTriedAgainWhenThatOneEnds() {
        var job = RecordJob()
        _ = job.start()
        _ = job.handle(.sessionReady)
        #expect(job.handle(.passThruRefused(.rejected, "busy", tryAgainMs: 1200)) == [.scheduleRetry(afterMs: 1250)])
        #expect(job.state == .preparing)
        #expect(job.handle(.retryDue) == [.startPassThru])
        #expect(job.passThruAttempts == 2)
        // Bounded: after the last attempt the rejection ends the job.
        for _ in 2..<RecordJob.maxPassThruAttempts {
            #expect(job.handle(.passThruRefused(.rejected, "busy", tryAgainMs: 10)) == [.scheduleRetry(afterMs: 60)])
            #expect(job.handle(.retryDue) == [.startPassThru])
        }
        let last = job.handle(.passThruRefused(.rejected, "busy", tryAgainMs: 10))
        #expect(last.contains(.releaseSession))
        #expect(job.resultCode == .rejected)
        // A cancel while waiting ends the job; the retry then does nothing.
        var waiting = RecordJob()
        _ = waiting.start()
        _ = waiting.handle(.sessionReady)
        _ = waiting.handle(.passThruRefused(.rejected, "busy", tryAgainMs: 500))
        #expect(waiting.handle(.cancel).last == .finish(.aborted, pieceID: "", reason: "cancelled"))
        #expect(waiting.handle(.retryDue) == [])
    }

    @Test func cancelInEveryState() {
        // preparing
        var (job, commands) = run([.cancel])
        #expect(job.resultCode == .aborted)
        #expect(commands.last == .finish(.aborted, pieceID: "", reason: "cancelled"))
        // prompting / recording: the pass-thru is cancelled, then nothing is stored
        (job, commands) = run([.sessionReady, .passThruStarted(prompting: true), .cancel, .framesCaptured(3),
                               .passThruFinished(.success, reason: "cancel")])
        #expect(commands.contains(.cancelPassThru))
        #expect(!commands.contains(.store))
        #expect(job.resultCode == .aborted)
        // storing: the piece is deleted as soon as it exists
        (job, commands) = run([.sessionReady, .passThruStarted(prompting: false), .framesCaptured(3),
                               .passThruFinished(.success, reason: "done"), .cancel, .stored(pieceID: "p")])
        #expect(commands.contains(.deletePiece("p")))
        #expect(job.resultCode == .aborted)
        #expect(job.pieceID == "")
        // confirming
        (job, commands) = run([.sessionReady, .passThruStarted(prompting: false), .framesCaptured(3),
                               .passThruFinished(.success, reason: "done"), .stored(pieceID: "q"), .cancel])
        #expect(commands.contains(.deletePiece("q")))
        #expect(!commands.contains(.presentConfirmation) || commands.last == .finish(.aborted, pieceID: "", reason: "cancelled"))
        #expect(job.resultCode == .aborted)
        // finished: nothing more happens
        (job, commands) = run([.cancel, .cancel, .sessionReady])
        #expect(commands.filter { if case .finish = $0 { true } else { false } }.count == 1)
        // cancelled before the pass-thru was accepted: it is cancelled when it starts
        var early = RecordJob()
        _ = early.start()
        _ = early.handle(.sessionReady)
        #expect(early.handle(.cancel) == [.releaseSession, .finish(.aborted, pieceID: "", reason: "cancelled")])
    }

    @Test func servicesLeavingEndTheJobClearly() {
        var (job, commands) = run([.sessionReady, .passThruStarted(prompting: false), .serviceLost(.capture)])
        #expect(job.resultCode == .genericError)
        #expect(commands.last == .finish(.genericError, pieceID: "", reason: "org.earshot.Capture1 left the bus during the pass-thru; nothing stored"))
        (job, _) = run([.sessionReady, .passThruStarted(prompting: false), .framesCaptured(1), .passThruFinished(.success, reason: "d"),
                        .serviceLost(.pieces)])
        #expect(job.resultCode == .genericError)
        (job, commands) = run([.sessionReady, .passThruStarted(prompting: false), .framesCaptured(1), .passThruFinished(.success, reason: "d"),
                               .stored(pieceID: "p"), .serviceLost(.alerts)])
        #expect(job.resultCode == .warnings)
        #expect(job.pieceID == "p")
        (job, _) = run([.sessionReady, .passThruStarted(prompting: false), .serviceLost(.session), .serviceLost(.alerts), .framesCaptured(1),
                        .passThruFinished(.success, reason: "d"), .stored(pieceID: "p"), .confirmationCompleted(.success, tryAgainMs: nil)])
        #expect(job.resultCode == .warnings)  // the session left: stored, with a warning
    }
}
