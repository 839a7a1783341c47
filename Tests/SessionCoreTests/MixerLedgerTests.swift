import Foundation
import SessionCore
import Testing

@Suite struct MixerLedgerTests {
    func radio(volume: Double = 0.8, muted: Bool = false, id: UInt32 = 40, serial: UInt64 = 400, role: String = "Music") -> MixerStream {
        MixerStream(id: id, serial: serial, application: "radio", role: role, pid: 100, nodeName: "radio", volume: volume, muted: muted)
    }

    /// Plans, then has the mixer carry out the commands (returns the stream as it is after).
    func apply(_ ledger: inout MixerLedger, _ stream: MixerStream, _ treatment: StreamTreatment, duck: Double = 0.3)
        -> (MixerStream, [MixerCommand]) {
        let commands = ledger.plan(streams: [stream], treatments: [stream.id: treatment], duckLevel: duck)
        var volume = stream.volume
        var muted = stream.muted
        for command in commands {
            volume = command.volume ?? volume
            muted = command.muted ?? muted
        }
        let after = MixerStream(id: stream.id, serial: stream.serial, application: stream.application, role: stream.role, pid: stream.pid,
                                nodeName: stream.nodeName, volume: volume, muted: muted)
        // The mixer reports the change back.
        _ = ledger.plan(streams: [after], treatments: [stream.id: treatment], duckLevel: duck)
        return (after, commands)
    }

    @Test func duckingLowersFromTheStreamsOwnLevelAndRestoresIt() {
        var ledger = MixerLedger()
        let (ducked, commands) = apply(&ledger, radio(), .ducked)
        #expect(commands == [MixerCommand(stream: 40, volume: 0.8 * 0.3, muted: nil)])
        #expect(ledger.ownLevel(of: ducked).volume == 0.8)
        let (restored, back) = apply(&ledger, ducked, .untouched)
        #expect(back == [MixerCommand(stream: 40, volume: 0.8, muted: nil)])
        #expect(restored.volume == 0.8)
        #expect(ledger.isEmpty)
    }

    @Test func mutingKeepsTheVolumeAndRestoresTheMute() {
        var ledger = MixerLedger()
        let (muted, commands) = apply(&ledger, radio(), .muted)
        #expect(commands == [MixerCommand(stream: 40, volume: nil, muted: true)])
        let (_, back) = apply(&ledger, muted, .untouched)
        #expect(back == [MixerCommand(stream: 40, volume: nil, muted: false)])
        #expect(ledger.isEmpty)
    }

    @Test func anAlreadyMutedStreamStaysMuted() {
        var ledger = MixerLedger()
        let (ducked, _) = apply(&ledger, radio(muted: true), .ducked)
        let (after, _) = apply(&ledger, ducked, .untouched)
        #expect(after.muted && after.volume == 0.8)
    }

    @Test func aUsersChangeWhileDuckedIsTheLevelRestored() {
        var ledger = MixerLedger()
        let (ducked, _) = apply(&ledger, radio(), .ducked)
        // The user turns the radio down to 0.5 while it is ducked.
        let (again, commands) = apply(&ledger, radio(volume: 0.5), .ducked)
        #expect(commands == [MixerCommand(stream: 40, volume: 0.5 * 0.3, muted: nil)])
        #expect(ducked.volume != again.volume)
        let (restored, _) = apply(&ledger, again, .untouched)
        #expect(abs(restored.volume - 0.5) < 1e-9)
    }

    @Test func aReportOlderThanTheChangeIsNotTheUsers() {
        var ledger = MixerLedger()
        #expect(ledger.plan(streams: [radio()], treatments: [40: .ducked], duckLevel: 0.3).count == 1)
        // The mixer reports the old level once more before the change lands.
        #expect(ledger.plan(streams: [radio()], treatments: [40: .ducked], duckLevel: 0.3) == [])
        #expect(ledger.ownLevel(of: radio()).volume == 0.8)
    }

    @Test func aQuickReactivationDoesNotDuckTwice() {
        var ledger = MixerLedger()
        let (ducked, _) = apply(&ledger, radio(), .ducked)
        // Deactivate: the restore is sent; activate again before the mixer reports it.
        #expect(ledger.plan(streams: [ducked], treatments: [40: .untouched], duckLevel: 0.3) == [MixerCommand(stream: 40, volume: 0.8, muted: nil)])
        #expect(ledger.plan(streams: [ducked], treatments: [40: .ducked], duckLevel: 0.3) == [MixerCommand(stream: 40, volume: 0.8 * 0.3, muted: nil)])
    }

    @Test func aNewDuckLevelIsAppliedToDuckedStreams() {
        var ledger = MixerLedger()
        let (ducked, _) = apply(&ledger, radio(), .ducked)
        let (_, commands) = apply(&ledger, ducked, .ducked, duck: 0.5)
        #expect(commands == [MixerCommand(stream: 40, volume: 0.4, muted: nil)])
    }

    @Test func aStreamEndingWhileDuckedHealsTheNextOneUnderItsKey() {
        var ledger = MixerLedger()
        let (ducked, _) = apply(&ledger, radio(), .ducked)
        _ = ledger.plan(streams: [], treatments: [:], duckLevel: 0.3)
        #expect(ledger.leaks.count == 1)
        // The next Music stream arrives at the ducked level WirePlumber remembered.
        let next = radio(volume: ducked.volume, id: 50, serial: 500)
        let (healed, commands) = apply(&ledger, next, .untouched)
        #expect(commands == [MixerCommand(stream: 50, volume: 0.8, muted: nil)])
        #expect(abs(healed.volume - 0.8) < 1e-9)
        #expect(ledger.isEmpty)
    }

    @Test func aNewStreamAtAnotherLevelIsNotHealed() {
        var ledger = MixerLedger()
        _ = apply(&ledger, radio(), .ducked)
        _ = ledger.plan(streams: [], treatments: [:], duckLevel: 0.3)
        let (_, commands) = apply(&ledger, radio(volume: 0.6, id: 50, serial: 500), .untouched)
        #expect(commands == [])
    }

    @Test func aReusedIdIsANewStream() {
        var ledger = MixerLedger()
        _ = apply(&ledger, radio(), .ducked)
        let other = MixerStream(id: 40, serial: 999, application: "game", role: "Game", pid: 7, nodeName: "game", volume: 1, muted: false)
        let (_, commands) = apply(&ledger, other, .ducked)
        #expect(commands == [MixerCommand(stream: 40, volume: 0.3, muted: nil)])
        #expect(ledger.leaks["media.role:Music"] != nil)
    }

    @Test func theLedgerSurvivesARestart() throws {
        var ledger = MixerLedger()
        let (ducked, _) = apply(&ledger, radio(), .ducked)
        var loaded = try JSONDecoder().decode(MixerLedger.self, from: try JSONEncoder().encode(ledger))
        #expect(loaded == ledger)
        loaded.forgetPending()
        // No activation survives a restart: everything goes back.
        let (restored, commands) = apply(&loaded, ducked, .untouched)
        #expect(commands == [MixerCommand(stream: 40, volume: 0.8, muted: nil)])
        #expect(restored.volume == 0.8)
        #expect(loaded.isEmpty)
    }

    @Test func leaksAreBounded() {
        var ledger = MixerLedger()
        for index in 0..<(MixerLedger.leakLimit + 10) {
            let stream = radio(id: UInt32(index + 1), serial: UInt64(index + 1), role: "Role\(index)")
            _ = apply(&ledger, stream, .ducked)
            _ = ledger.plan(streams: [], treatments: [:], duckLevel: 0.3)
        }
        #expect(ledger.leaks.count == MixerLedger.leakLimit)
        #expect(ledger.leaks["media.role:Role0"] == nil)
    }
}
