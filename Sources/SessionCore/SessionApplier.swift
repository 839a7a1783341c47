import ContractCore

/// The outcome of applying a desired state: the values in force afterwards, and the step
/// that failed (nothing after it was applied).
public struct ApplyOutcome: Sendable {
    public let state: AppliedState
    public let applied: [ApplyStep]
    public let failure: (step: ApplyStep, violation: RuleViolation)?

    public var succeeded: Bool { failure == nil }
}

/// Applies a desired state in the contract's order: category+mode+options, sample rate,
/// IO buffer duration, preferred input, data source + polar pattern, orientation,
/// activation, stopping at the first failure.
public enum SessionApplier {
    public static func apply(_ desired: DesiredState, from previous: AppliedState, to system: some AudioSystem) -> ApplyOutcome {
        var state = previous
        var applied: [ApplyStep] = []
        for step in ApplyStep.allCases {
            do {
                try perform(step, desired, &state, system)
                applied.append(step)
            } catch {
                return ApplyOutcome(state: state, applied: applied, failure: (step, error))
            }
        }
        return ApplyOutcome(state: state, applied: applied, failure: nil)
    }

    private static func perform(_ step: ApplyStep, _ desired: DesiredState, _ state: inout AppliedState,
                                _ system: some AudioSystem) throws(RuleViolation) {
        switch step {
        case .category:
            try system.setCategory(desired.configuration)
            state.configuration = desired.configuration
        case .sampleRate:
            if let rate = desired.sampleRate { state.sampleRate = try system.setPreferredSampleRate(rate) }
        case .ioBufferDuration:
            if let duration = desired.ioBufferDuration {
                state.ioBufferDuration = try system.setPreferredIOBufferDuration(duration)
            }
        case .preferredInput:
            let route = try system.setPreferredInput(desired.preferredInput)
            state.input = route.input
            state.sampleRate = route.sampleRate
            state.ioBufferDuration = route.ioBufferDuration
        case .dataSource:
            let source = try system.setDataSource(desired.dataSourceName, polarPattern: desired.polarPattern)
            state.dataSourceName = source.dataSource
            state.polarPattern = source.polarPattern
            state.channels = source.channels
        case .orientation:
            if let orientation = desired.inputOrientation {
                try system.setInputOrientation(orientation)
                state.orientation = orientation
            }
        case .activation:
            let active = desired.active ?? state.active
            try system.setActive(active, configuration: desired.configuration)
            state.active = active
        }
    }
}
