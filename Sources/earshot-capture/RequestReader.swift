import CaptureCore
import ContractCore
import EarshotContract
import EarshotDBus
import EarshotService
import FoundationEssentials

/// A PerformAudioPassThru request read against the contract's keys (types, names, ranges
/// and defaults come from there), then the rules the contract states in words: display
/// text, the output path, the prompt's chunks and its files.
enum RequestReader {
    typealias Keys = CaptureContract.Manager.Keys

    static func read(_ call: MethodCall) throws(DBusError) -> PassThruRequest {
        let options = try call.request(CaptureContract.Manager.performAudioPassThru)
        return try DBusError.readingRequest {
            var request = PassThruRequest(samplingRate: try options.require(Keys.samplingRate),
                                          bitsPerSample: try options.require(Keys.bitsPerSample),
                                          maxDurationMs: try options.require(Keys.maxDuration))
            request.muteAudio = try options.require(Keys.muteAudio)
            request.displayText1 = try PassThruRules.displayText(try options.require(Keys.displayText1), field: Keys.displayText1.name)
            request.displayText2 = try PassThruRules.displayText(try options.require(Keys.displayText2), field: Keys.displayText2.name)
            request.chunkMs = try options.require(Keys.chunkMs)
            request.endOnSilenceMs = try options.require(Keys.endOnSilenceMs)
            request.outliveOwner = try options.require(Keys.outliveOwner)
            request.outputPath = try options.get(Keys.outputPath, as: String.self).map(PassThruRules.outputPath)
            request.delivery = try PassThruRules.delivery(try options.require(Keys.delivery))
            if let prompt = try options.get(Keys.initialPrompt, as: DBusValue.self) {
                request.initialPrompt = try PassThruRules.initialPrompt(try prompt.speechPairs(field: Keys.initialPrompt.name))
            }
            request.noiseSuppression = try PassThruRules.noiseSuppression(try options.require(Keys.noiseSuppression))
            request.bargeIn = try options.require(Keys.bargeIn)
            request.echoCancel = try options.require(Keys.echoCancel)
            try PassThruRules.checkProcessing(request)
            for (index, chunk) in request.initialPrompt.enumerated() where chunk.kind == .file {
                guard FileManager.default.isReadableFile(atPath: chunk.text) else {
                    throw RuleViolation(.fileNotFound, field: "\(Keys.initialPrompt.name)[\(index)]", "cannot read \(chunk.text)")
                }
            }
            return request
        }
    }
}
