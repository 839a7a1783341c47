import CaptureCore
import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotService
import PiecesCore

/// A `RecordPiece` request, checked: what to capture, and the piece's metadata for `Drop`.
struct RecordPlan: Sendable {
    var title: String
    var prompt: String?
    var displayText1: String?
    var displayText2: String?
    var maxDurationMs: UInt32
    var samplingRate: UInt32
    var bitsPerSample: UInt32
    var endOnSilenceMs: UInt32?
    var outliveOwner: Bool
    /// The Pieces1 keys given, passed on to `Drop` as they came.
    var metadata: PieceMetadata

    typealias Keys = OrchestratorContract.Manager.Keys
    typealias CaptureKeys = CaptureContract.Manager.Keys

    static func read(_ call: MethodCall) throws(DBusError) -> RecordPlan {
        let options = try call.request(OrchestratorContract.Manager.recordPiece)
        func given<T: DeclaredValue>(_ key: OptionKey) throws(DBusError) -> T? { options.has(key) ? try options.get(key) : nil }
        let title: String = try options.require(Keys.title)
        let prompt: String? = try given(Keys.prompt)
        let text1: String? = try given(Keys.displayText1)
        let text2: String? = try given(Keys.displayText2)
        let maxMs: UInt32 = try options.require(Keys.maxDuration)
        let rate: UInt32 = try options.require(Keys.samplingRate)
        let bits: UInt32 = try options.require(Keys.bitsPerSample)
        let silence: UInt32? = try given(Keys.endOnSilenceMs)
        let outlive: Bool = try options.require(Keys.outliveOwner)
        // The piece's keys go on to Drop as they were read (in Drop's types).
        typealias PieceKeys = PiecesContract.Manager.PieceKeys
        var metadata = PieceMetadata()
        metadata.description = try given(PieceKeys.description)
        metadata.tempo = try given(PieceKeys.tempo)
        metadata.loopStartMicroseconds = try given(PieceKeys.loopStartMicroseconds)
        metadata.loopEndMicroseconds = try given(PieceKeys.loopEndMicroseconds)
        metadata.timeSignatureUpper = try given(PieceKeys.timeSignatureUpper)
        metadata.timeSignatureLower = try given(PieceKeys.timeSignatureLower)
        metadata.basedOn = try given(PieceKeys.basedOn) ?? []
        metadata.tonality = try (given(PieceKeys.tonality) as String?).flatMap(PieceTonality.init(rawValue:))
        metadata.scale = try given(PieceKeys.scale)
        metadata.root = try given(PieceKeys.root)
        metadata.listed = try given(PieceKeys.listed)
        return try DBusError.readingRequest {
            _ = try PassThruRules.samplingRate(rate)
            _ = try PassThruRules.bitsPerSample(bits)
            // The title's rules now, rather than after the recording.
            try PieceDraft(title: title).validate()
            return RecordPlan(title: title, prompt: prompt, displayText1: text1, displayText2: text2, maxDurationMs: maxMs,
                              samplingRate: rate, bitsPerSample: bits, endOnSilenceMs: silence, outliveOwner: outlive,
                              metadata: metadata)
        }
    }

    /// The `PerformAudioPassThru` request.
    var passThruRequest: AudioPassThruRequest {
        var request = AudioPassThruRequest(samplingRate: samplingRate, bitsPerSample: bitsPerSample, maxDurationMs: maxDurationMs)
        // The job holds the session's recording claim itself.
        request.muteAudio = false
        if let prompt, !prompt.isEmpty { request.initialPrompt = [.text(prompt)] }
        request.displayText1 = displayText1
        request.displayText2 = displayText2
        request.endOnSilenceMs = endOnSilenceMs
        return request
    }
}
