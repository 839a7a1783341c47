import AlertsCore
import CaptureCore
import EarshotContract
import OrchestratorCore
import Testing

/// The closed sets of strings the contract lists (why an alert or a pass-thru ended, a
/// job's steps) are those the services' cores produce: a reason a core adds without the
/// contract naming it (so without the client knowing it) fails here.
@Suite struct ClosedSetTests {
    @Test func theCoresReportExactlyTheContractsValues() {
        #expect(AlertsCore.AlertEndReason.allCases.map(\.rawValue).sorted() == AlertsContract.Alert.endReasons.sorted())
        #expect(CaptureCore.EndReason.allCases.map(\.rawValue).sorted() == CaptureContract.PassThru.endReasons.sorted())
        #expect(OrchestratorCore.JobState.allCases.map(\.rawValue) == OrchestratorContract.Job.states)
    }
}
