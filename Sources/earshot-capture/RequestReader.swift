import CaptureCore
import ContractCore
import EarshotDBus
import EarshotService
import Foundation

/// Reads a PerformAudioPassThru `a{sv}` into a validated request, with the contract's
/// error names: wrong types and unknown keys are InvalidArgs, broken rules InvalidData,
/// a missing FILE prompt FileNotFound.
enum RequestReader {
    static func read(_ value: DBusValue) throws(DBusError) -> PassThruRequest {
        var options = try OptionReader(value, errorName: DBusError.earshotPrefix + "InvalidData")
        return try DBusError.readingRequest {
            let rate = try options.require("SamplingRate", numberOrName(PassThruRules.samplingRate, PassThruRules.samplingRate(named:)))
            let bits = try options.require("BitsPerSample", numberOrName(PassThruRules.bitsPerSample, PassThruRules.bitsPerSample(named:)))
            _ = try PassThruRules.audioType(try options.require("AudioType", .string))
            let maxMs = try options.require("MaxDuration", .uint32(PassThruRules.maxDurationMs, unit: "ms"))
            var request = PassThruRequest(samplingRate: rate, bitsPerSample: bits, maxDurationMs: maxMs)
            request.muteAudio = try options.get("MuteAudio", .bool) ?? true
            request.displayText1 = try PassThruRules.displayText(try options.get("DisplayText1", .string) ?? "", field: "DisplayText1")
            request.displayText2 = try PassThruRules.displayText(try options.get("DisplayText2", .string) ?? "", field: "DisplayText2")
            request.chunkMs = try options.get("ChunkMs", .uint32(PassThruRules.chunkMs, unit: "ms")) ?? 100
            request.endOnSilenceMs = try options.get("EndOnSilenceMs", .uint32(PassThruRules.endOnSilenceMs, unit: "ms")) ?? 0
            request.outliveOwner = try options.get("OutliveOwner", .bool) ?? false
            request.outputPath = try options.get("OutputPath", .string).map(PassThruRules.outputPath)
            request.delivery = try options.get("Delivery", .string).map(PassThruRules.delivery) ?? .signals
            if let prompt = try options.get("InitialPrompt", .exactly(.array(.structure([.string, .string])))) {
                request.initialPrompt = try PassThruRules.initialPrompt(try prompt.speechPairs(field: "InitialPrompt"))
            }
            try options.finish()
            for (index, chunk) in request.initialPrompt.enumerated() where chunk.kind == .file {
                guard FileManager.default.isReadableFile(atPath: chunk.text) else {
                    throw RuleViolation("FileNotFound", field: "InitialPrompt[\(index)]", "cannot read \(chunk.text)")
                }
            }
            return request
        }
    }

    /// A key given as a number (any integer type) or as one of its names.
    static func numberOrName(_ number: @escaping @Sendable (UInt32) throws(RuleViolation) -> UInt32,
                             _ name: @escaping @Sendable (String) throws(RuleViolation) -> UInt32) -> OptionType<UInt32> {
        OptionType(wanted: "u (or its name as s)") { value, reader, key in
            do throws(RuleViolation) {
                if let text = value.stringValue { return .value(try name(text)) }
                guard let wide = value.integerValue else { return .wrongType }
                guard let narrow = UInt32(exactly: wide) else {
                    return .invalid("\(wide) is outside 0..\(UInt32.max)")
                }
                return .value(try number(narrow))
            } catch {
                return .failure(DBusError(error))
            }
        }
    }
}
