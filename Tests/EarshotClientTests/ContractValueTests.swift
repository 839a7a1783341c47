@testable import EarshotClient
import EarshotContract
import EarshotDBus
import Testing

/// Each closed set of strings the contract names has a type in the client whose known
/// values are the contract's list, in its order; a value it does not know is kept.
@Suite struct ContractValueTests {
    static func raw<Value: ContractValue>(_: Value.Type) -> [String] { Value.known.map(\.rawValue) }

    @Test func eachTypeKnowsExactlyTheContractsValues() {
        #expect(Self.raw(PassThruEndReason.self) == CaptureContract.PassThru.endReasons)
        #expect(Self.raw(PassThruState.self) == CaptureContract.PassThru.states)
        #expect(Self.raw(AlertEndReason.self) == AlertsContract.Alert.endReasons)
        #expect(Self.raw(AlertState.self) == AlertsContract.Alert.states)
        #expect(Self.raw(JobState.self) == OrchestratorContract.Job.states)
        #expect(Self.raw(ActivationState.self) == SessionContract.Activation.states)
    }

    /// The request's closed sets: each enum's values are those its key's rule allows.
    @Test func eachRequestEnumSendsExactlyTheKeysValues() {
        func allowed(_ key: OptionKey) -> [String] { key.rules.flatMap(Self.values) }
        typealias Capture = CaptureContract.Manager.Keys
        typealias Alerts = AlertsContract.Manager
        typealias Pieces = PiecesContract.Manager
        #expect(Alert.Priority.allCases.map(\.rawValue) == allowed(Alerts.Keys.priority))
        #expect(Alert.SoftButton.SystemAction.allCases.map(\.rawValue) == allowed(Alerts.SoftButtonKeys.systemAction))
        #expect(Alert.SoftButton.ButtonType.allCases.map(\.rawValue) == allowed(Alerts.SoftButtonKeys.type))
        #expect(AudioPassThruRequest.Delivery.allCases.map(\.rawValue) == allowed(Capture.delivery))
        #expect(AudioPassThruRequest.NoiseSuppression.allCases.map(\.rawValue) == allowed(Capture.noiseSuppression))
        #expect(PieceQuery.Order.allCases.map(\.rawValue) == allowed(Pieces.QueryKeys.sortBy))
        #expect(PieceTonality.allCases.map(\.rawValue) == allowed(Pieces.PieceKeys.tonality))
        #expect(PieceTonality.allCases.map(\.rawValue) == allowed(Pieces.QueryKeys.tonality))
    }

    @Test func aValueAddedLaterIsKeptAsSent() {
        #expect(AlertEndReason(reported: "button") == .button)
        #expect(AlertEndReason(reported: "rate-limited") == .rateLimited)
        let later = AlertEndReason(reported: "driver-distracted")
        #expect(later == .unknown("driver-distracted") && later.rawValue == "driver-distracted" && "\(later)" == "driver-distracted")
        #expect(PassThruState(reported: "paused") == .unknown("paused"))
    }

    static func values(_ rule: OptionKey.Rule) -> [String] {
        if case .oneOf(let values, _, _, _) = rule { return values }
        return []
    }
}
