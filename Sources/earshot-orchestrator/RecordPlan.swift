import CaptureCore
import ContractCore
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
    var metadata: [String: DBusValue]

    static let defaultMaxDurationMs: UInt32 = 10_000

    /// Reads the Pieces1 keys, with Drop's type rules (integers of any width, floating
    /// keys from integers too), as the values Drop takes.
    static func readPieceKeys(_ options: inout OptionReader) throws(DBusError) -> [String: DBusValue] {
        var metadata: [String: DBusValue] = [:]
        if let value = try options.get("Description", .string) { metadata["Description"] = .string(value) }
        if let value = try options.get("Tempo", .double()) { metadata["Tempo"] = .double(value) }
        for key in ["LoopStartMicroseconds", "LoopEndMicroseconds"] {
            if let value = try options.get(key, .uint64()) { metadata[key] = .uint64(value) }
        }
        for key in ["TimeSignatureUpper", "TimeSignatureLower", "Root"] {
            if let value = try options.get(key, .uint8()) { metadata[key] = .byte(value) }
        }
        if let value = try options.get("BasedOn", .strings) { metadata["BasedOn"] = .strings(value) }
        if let value = try options.get("Tonality", .string) { metadata["Tonality"] = .string(value) }
        if let value = try options.get("Scale", .exactly(.array(.boolean))) { metadata["Scale"] = value }
        if let value = try options.get("Listed", .bool) { metadata["Listed"] = .boolean(value) }
        return metadata
    }

    static func read(_ call: MethodCall) throws(DBusError) -> RecordPlan {
        var options = try call.options(0)
        let title = try options.require("Title", .string)
        let prompt = try options.get("Prompt", .string(maxLength: 500))
        let text1 = try options.get("DisplayText1", .string(maxLength: 500))
        let text2 = try options.get("DisplayText2", .string(maxLength: 500))
        let maxMs = try options.get("MaxDuration", .uint32(PassThruRules.maxDurationMs, unit: "ms")) ?? defaultMaxDurationMs
        let rate = try options.get("SamplingRate", .uint32()) ?? 16000
        let bits = try options.get("BitsPerSample", .uint32()) ?? 16
        let silence = try options.get("EndOnSilenceMs", .uint32(PassThruRules.endOnSilenceMs, unit: "ms"))
        let outlive = try options.get("OutliveOwner", .bool) ?? false
        let metadata = try readPieceKeys(&options)
        try options.finish()
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
    var passThruRequest: DBusValue {
        var request: [String: DBusValue] = [
            "SamplingRate": .uint32(samplingRate), "BitsPerSample": .uint32(bitsPerSample), "AudioType": .string("PCM"),
            "MaxDuration": .uint32(maxDurationMs),
            // The job holds the session's recording claim itself.
            "MuteAudio": .boolean(false),
        ]
        if let prompt, !prompt.isEmpty {
            request["InitialPrompt"] = .array(.structure([.string, .string]), [.structure([.string("TEXT"), .string(prompt)])])
        }
        if let displayText1 { request["DisplayText1"] = .string(displayText1) }
        if let displayText2 { request["DisplayText2"] = .string(displayText2) }
        if let endOnSilenceMs { request["EndOnSilenceMs"] = .uint32(endOnSilenceMs) }
        return .vardict(request)
    }
}
