import ContractCore
import SessionCore
import Testing

/// An audio system that records each call and fails at a chosen step.
final class RecordingSystem: AudioSystem {
    var calls: [ApplyStep] = []
    let failAt: ApplyStep?

    init(failAt: ApplyStep? = nil) { self.failAt = failAt }

    private func step(_ step: ApplyStep) throws(RuleViolation) {
        calls.append(step)
        if step == failAt { throw RuleViolation(.genericError, field: step.rawValue, "failed on purpose") }
    }

    func setCategory(_ configuration: CategoryConfiguration) throws(RuleViolation) { try step(.category) }
    func setPreferredSampleRate(_ hertz: Double) throws(RuleViolation) -> Double {
        try step(.sampleRate)
        return 48000
    }
    func setPreferredIOBufferDuration(_ seconds: Double) throws(RuleViolation) -> Double {
        try step(.ioBufferDuration)
        return 0.02
    }
    func setPreferredInput(_ name: String?) throws(RuleViolation) -> (input: String, sampleRate: Double, ioBufferDuration: Double) {
        try step(.preferredInput)
        return (name ?? "default", 48000, 0.021)
    }
    func setDataSource(_ name: String?, polarPattern: PolarPattern?) throws(RuleViolation)
        -> (dataSource: String, polarPattern: PolarPattern, channels: UInt32) {
        try step(.dataSource)
        return (name ?? "default", polarPattern ?? .omnidirectional, polarPattern?.channels ?? 1)
    }
    func setInputOrientation(_ orientation: InputOrientation) throws(RuleViolation) { try step(.orientation) }
    func setActive(_ active: Bool, configuration: CategoryConfiguration) throws(RuleViolation) { try step(.activation) }
}

@Suite struct ApplyOrderTests {
    static let previous = AppliedState(configuration: DesiredState.initial.configuration, sampleRate: 44100,
                                       ioBufferDuration: 0.01, input: "", output: "default", dataSourceName: "default",
                                       polarPattern: .omnidirectional, channels: 1, orientation: .none, active: false)

    static func fullDesire() throws -> DesiredState {
        DesiredState(configuration: try CategoryConfiguration(category: .playAndRecord, mode: .voiceChat, options: [.defaultToSpeaker]),
                     active: true, sampleRate: 48000, ioBufferDuration: 0.02, inputOrientation: .landscapeLeft,
                     preferredInput: "stereo_mic", dataSourceName: "default", polarPattern: .stereo)
    }

    @Test func everyStepInContractOrder() throws {
        let system = RecordingSystem()
        let outcome = SessionApplier.apply(try Self.fullDesire(), from: Self.previous, to: system)
        #expect(outcome.succeeded)
        #expect(system.calls == [.category, .sampleRate, .ioBufferDuration, .preferredInput, .dataSource, .orientation, .activation])
        #expect(outcome.applied == ApplyStep.allCases)
        #expect(outcome.state.input == "stereo_mic")
        #expect(outcome.state.sampleRate == 48000)
        #expect(outcome.state.ioBufferDuration == 0.021)  // the input's value wins over the hint's
        #expect(outcome.state.channels == 2)
        #expect(outcome.state.polarPattern == .stereo)
        #expect(outcome.state.orientation == .landscapeLeft)
        #expect(outcome.state.active)
        #expect(outcome.state.configuration.category == .playAndRecord)
    }

    @Test(arguments: ApplyStep.allCases)
    func aFailureStopsEverythingAfterIt(failing: ApplyStep) throws {
        let system = RecordingSystem(failAt: failing)
        let outcome = SessionApplier.apply(try Self.fullDesire(), from: Self.previous, to: system)
        let index = ApplyStep.allCases.firstIndex(of: failing)!
        #expect(system.calls == Array(ApplyStep.allCases[...index]))
        #expect(outcome.applied == Array(ApplyStep.allCases[..<index]))
        #expect(outcome.failure?.step == failing)
        #expect(outcome.failure?.violation.error == .genericError)
        // Nothing from the failed step on is in the state.
        let state = outcome.state
        #expect((state.configuration.category == .playAndRecord) == (index > 0))
        #expect((state.input == "stereo_mic") == (index > 3))
        #expect((state.channels == 2) == (index > 4))
        #expect((state.orientation == .landscapeLeft) == (index > 5))
        #expect(state.active == false)
    }

    @Test func absentHintsLeaveValuesAlone() throws {
        let system = RecordingSystem()
        let desired = DesiredState(configuration: try CategoryConfiguration(category: .playback))
        let outcome = SessionApplier.apply(desired, from: Self.previous, to: system)
        #expect(system.calls == [.category, .preferredInput, .dataSource, .activation])
        #expect(outcome.state.orientation == .none)
        #expect(outcome.state.active == false)
    }
}
