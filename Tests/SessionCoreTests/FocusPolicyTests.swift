import SessionCore
import Testing

@Suite struct FocusPolicyTests {
    let radio = MixerStream(id: 40, serial: 400, application: "radio", role: "Music", pid: 100, nodeName: "radio", volume: 0.8, muted: false)
    let prompt = MixerStream(id: 41, serial: 410, application: "earshot-alerts", role: "Notification", pid: 200, nodeName: "alsa_playback.earshot-alerts",
                             volume: 1, muted: false)
    let siren = MixerStream(id: 42, serial: 420, application: "ecall", role: "Emergency", pid: 300, nodeName: "ecall", volume: 1, muted: false)
    let unnamed = MixerStream(id: 43, serial: 430, application: "player", role: "", pid: 400, nodeName: "player", volume: 1, muted: false)

    func claim(_ effect: FocusClaim.Effect, pid: Int32, nodes: Set<String> = [], id: UInt64 = 1) -> FocusClaim {
        FocusClaim(activation: id, effect: effect, ownProcesses: [pid], ownNodes: nodes)
    }

    @Test func duckingLowersEveryOtherMediaStreamButNotItsOwn() {
        let treatments = FocusPolicy.treatments(of: [radio, prompt, siren, unnamed], claims: [claim(.duck, pid: 200)], roles: .standard)
        #expect(treatments == [40: .ducked, 41: .untouched, 42: .untouched, 43: .ducked])
    }

    @Test func mutingWinsOverDucking() {
        let claims = [claim(.duck, pid: 200, id: 1), claim(.mute, pid: 500, id: 2)]
        let treatments = FocusPolicy.treatments(of: [radio, prompt], claims: claims, roles: .standard)
        #expect(treatments == [40: .muted, 41: .muted])  // the alert is other audio to the muting claim
    }

    @Test func anAudioStreamNameMakesAStreamOwn() {
        let treatments = FocusPolicy.treatments(of: [radio, prompt], claims: [claim(.mute, pid: 999, nodes: ["radio"])], roles: .standard)
        #expect(treatments == [40: .untouched, 41: .muted])
    }

    @Test func aStreamCarryingTheClaimsStreamKeyIsOwnWhateverItsProcess() {
        let child = MixerStream(id: 45, serial: 450, application: "paplay", role: "Music", pid: 777, nodeName: "paplay",
                                streamKey: "nav-1", volume: 1, muted: false)
        #expect(FocusPolicy.treatment(of: child, claims: [claim(.duck, pid: 200, nodes: ["nav-1"])], roles: .standard) == .untouched)
        #expect(FocusPolicy.treatment(of: child, claims: [claim(.duck, pid: 200, nodes: ["nav-2"])], roles: .standard) == .ducked)
    }

    @Test func aStreamWithoutAProcessIsNotOwnedByAClaimWithoutOne() {
        let anonymous = MixerStream(id: 44, serial: 1, application: "", role: "Music", pid: 0, nodeName: "x", volume: 1, muted: false)
        #expect(FocusPolicy.treatment(of: anonymous, claims: [FocusClaim(activation: 1, effect: .duck, ownProcesses: [0], ownNodes: [])],
                                      roles: .standard) == .ducked)
    }

    @Test func claimsFollowTheActivationsConfiguration() throws {
        let solo = try CategoryConfiguration(category: .playback)
        let ducking = try CategoryConfiguration(category: .playback, options: [.duckOthers])
        let mixing = try CategoryConfiguration(category: .playback, options: [.mixWithOthers])
        #expect(FocusClaim.of(activation: 1, configuration: solo, interrupted: false, ownProcesses: [], ownNodes: [])?.effect == .mute)
        #expect(FocusClaim.of(activation: 1, configuration: ducking, interrupted: false, ownProcesses: [], ownNodes: [])?.effect == .duck)
        #expect(FocusClaim.of(activation: 1, configuration: mixing, interrupted: false, ownProcesses: [], ownNodes: []) == nil)
        #expect(FocusClaim.of(activation: 1, configuration: solo, interrupted: true, ownProcesses: [], ownNodes: []) == nil)
    }

    @Test func theRoleTableReadsAndRefuses() throws {
        let table = try RoleTable.parse("""
            # media roles
            Radio = media   # the radio
            navigation=EXEMPT

            * = exempt
            """)
        #expect(table.treatment(ofRole: "radio") == .media)
        #expect(table.treatment(ofRole: "Navigation") == .exempt)
        #expect(table.treatment(ofRole: "Unheard-of") == .exempt)
        #expect(table.treatment(ofRole: "") == .exempt)
        // Roles the file does not name stay as the standard table has them.
        #expect(table.treatment(ofRole: "Game") == .media)
        #expect(table.treatment(ofRole: "Accessibility") == .exempt)
        #expect(table.changes(from: .standard) == ["navigation: media → exempt", "radio: unlisted (media) → media", "*: media → exempt"])
        #expect(try RoleTable.parse("Music = media").treatment(ofRole: "Other") == .media)
        #expect(try RoleTable.parse("Music = media").changes(from: .standard).isEmpty)
        #expect(throws: RoleTableError(line: 2, "'loud' is not media or exempt")) { try RoleTable.parse("Music = media\nGame = loud") }
        #expect(throws: RoleTableError(line: 1, "'Music' is not 'Role = media' or 'Role = exempt'")) { try RoleTable.parse("Music") }
        #expect(throws: RoleTableError(line: 3, "music is already given on line 1")) { try RoleTable.parse("Music = media\n\nmusic = exempt") }
        #expect(throws: RoleTableError(line: 1, "'Mu sic' is not a role name (letters, digits, - _ . or *)")) { try RoleTable.parse("Mu sic = media") }
        #expect(try RoleTable.parse(RoleTable.standard.fileText) == RoleTable.standard)
    }

    /// Whatever a file or a table says, emergency audio is never lowered.
    @Test func emergencyIsAlwaysExempt() throws {
        #expect(throws: RoleTableError(line: 2, "EMERGENCY is always exempt: emergency audio is never lowered or silenced")) {
            try RoleTable.parse("Music = media\nEMERGENCY = media")
        }
        let everything = try RoleTable.parse("* = media\nAccessibility = media")
        #expect(everything.treatment(ofRole: "Emergency") == .exempt)
        #expect(RoleTable(roles: ["Emergency": .media], unlisted: .media).treatment(ofRole: "emergency") == .exempt)
    }

    @Test func theStandardTableNeverTouchesEmergencies() {
        #expect(RoleTable.standard.treatment(ofRole: "Emergency") == .exempt)
        #expect(RoleTable.standard.treatment(ofRole: "Music") == .media)
        #expect(RoleTable.standard.treatment(ofRole: "") == .media)
    }
}
