import SessionCore
import Testing

@Suite struct SoftLevelsTests {
    /// A stereo radio at its own `level` per channel, with software levels `soft` (nil:
    /// never set) and mutes as given.
    func radio(level: Double = 0.8, soft: [Double]? = nil, muted: Bool = false, softMuted: Bool = false, id: UInt32 = 40) -> MixerStream {
        MixerStream(id: id, serial: UInt64(id) * 10, application: "radio", role: "Music", pid: 100, nodeName: "radio",
                    volume: 1, muted: muted, channelVolumes: [level, level], softVolumes: soft, softMuted: softMuted)
    }

    func plan(_ streams: [MixerStream], _ treatments: [UInt32: StreamTreatment], duck: Double = 0.3) -> [MixerCommand] {
        SoftLevels.plan(streams: streams, treatments: treatments, duckLevel: duck)
    }

    @Test func duckingScalesTheStreamsOwnLevelsAndKeepsItsMute() {
        #expect(plan([radio()], [40: .ducked]).matches([MixerCommand(stream: 40, volumes: [0.24, 0.24], muted: false)]))
        // A stream its user muted stays muted while ducked.
        #expect(plan([radio(muted: true)], [40: .ducked]).map(\.muted) == [true])
    }

    @Test func mutingSilencesTheStreamAtItsOwnLevels() {
        #expect(plan([radio()], [40: .muted]) == [MixerCommand(stream: 40, volumes: [0.8, 0.8], muted: true)])
    }

    @Test func aStreamAlreadyAtItsTargetGetsNothing() {
        #expect(plan([radio(soft: [0.24, 0.24])], [40: .ducked]).isEmpty)
        #expect(plan([radio(soft: [0.8, 0.8], softMuted: true)], [40: .muted]).isEmpty)
    }

    @Test func anUntouchedStreamIsLeftAloneUnlessTheSessionsLevelsAreOnIt() {
        // Never set (1s), or set to its own levels: not the session's doing.
        #expect(plan([radio(), radio(soft: [0.8, 0.8], id: 41)], [:]).isEmpty)
        #expect(!SoftLevels.lowered(radio()))
        // Left lowered or silenced (a crash, or an activation that ended): restored.
        #expect(plan([radio(soft: [0.24, 0.24])], [:]) == [MixerCommand(stream: 40, volumes: [0.8, 0.8], muted: false)])
        #expect(plan([radio(soft: [0.8, 0.8], softMuted: true)], [:]) == [MixerCommand(stream: 40, volumes: [0.8, 0.8], muted: false)])
        // Restored with its own mute, not unmuted.
        #expect(plan([radio(soft: [0.24, 0.24], muted: true, softMuted: true)], [:]).map(\.muted) == [true])
    }

    @Test func aUserChangingALoweredStreamSetsTheLevelItIsLoweredFrom() {
        // Lowered from 0.8, then its user set 0.5: the mixer applies 0.5 again, the
        // software levels still say 0.24; the next plan lowers from 0.5.
        #expect(plan([radio(level: 0.5, soft: [0.24, 0.24])], [40: .ducked]).matches([MixerCommand(stream: 40, volumes: [0.15, 0.15], muted: false)]))
        // And once restored, the stream is at its new level.
        #expect(plan([radio(level: 0.5, soft: [0.24, 0.24])], [:]) == [MixerCommand(stream: 40, volumes: [0.5, 0.5], muted: false)])
    }

    @Test func aStreamWhoseLevelsAreNotKnownYetIsLeftUntilTheyAre() {
        let fresh = MixerStream(id: 40, serial: 1, application: "radio", role: "Music", pid: 100, nodeName: "radio",
                                volume: 1, muted: false, channelVolumes: [])
        #expect(plan([fresh], [40: .ducked]).isEmpty)
    }

    @Test func aNewDuckLevelApplies() {
        #expect(plan([radio(soft: [0.24, 0.24])], [40: .ducked], duck: 0.5).matches([MixerCommand(stream: 40, volumes: [0.4, 0.4], muted: false)]))
    }
}

private extension [MixerCommand] {
    /// The same commands, with levels equal to a float's precision (the plan multiplies).
    func matches(_ wanted: [MixerCommand]) -> Bool {
        count == wanted.count && zip(self, wanted).allSatisfy { got, want in
            got.stream == want.stream && got.muted == want.muted && got.volumes.count == want.volumes.count
                && zip(got.volumes, want.volumes).allSatisfy { abs($0 - $1) < 1e-9 }
        }
    }
}
