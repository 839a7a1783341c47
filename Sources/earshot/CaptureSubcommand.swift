import ArgumentParser
import EarshotContract
import EarshotDBus
import Foundation

/// `earshot capture`: a microphone pass-thru into a WAV file, with a live level meter.
struct CaptureSubcommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Record from the microphone (Capture1.PerformAudioPassThru) into a WAV file.",
        discussion: """
            Starts a pass-thru, receives its audio chunks (sent only to this client) and writes \
            them behind a WAV header, with the pass-thru's channel count. While it runs, stderr \
            shows the elapsed time and a peak/RMS level meter when it is a terminal. Ctrl-C \
            cancels the pass-thru (ABORTED) and keeps what was captured; a second Ctrl-C quits \
            at once. Prints the result code, the reason and the number of frames.

            Exit status: 0 SUCCESS or WARNINGS; 4 any other result code (e.g. ABORTED after \
            Ctrl-C, RETRY); 3 org.earshot.Capture1 is not running (or left during the capture); \
            1 an error reply (e.g. org.earshot.Error.Rejected while another pass-thru runs) or a \
            file that cannot be written; 2 a usage error; 130 a second Ctrl-C.
            """)

    @OptionGroup var options: ClientOptions

    @Option(help: ArgumentHelp("Sampling rate: 8000, 16000, 22050, 44100 or 48000.", valueName: "Hz"))
    var rate: UInt32 = 16000

    @Option(help: ArgumentHelp("Bits per sample: 8 (unsigned) or 16 (signed little-endian).", valueName: "8|16"))
    var bits: UInt32 = 16

    @Option(name: .customLong("max-ms"), help: ArgumentHelp("The longest the capture may last (1..1000000).", valueName: "ms"))
    var maxMs: UInt32 = 10_000

    @Option(help: ArgumentHelp("The WAV file to write.", valueName: "path"))
    var out: String

    @Option(help: ArgumentHelp("Spoken (through org.earshot.Alerts1) before recording starts.", valueName: "text"))
    var prompt: String?

    @Option(name: .customLong("end-on-silence-ms"),
            help: ArgumentHelp("End with SUCCESS after this much silence following speech.", valueName: "ms"))
    var endOnSilenceMs: UInt32?

    @Option(name: .customLong("chunk-ms"), help: ArgumentHelp("Audio per chunk (10..1000, default 100).", valueName: "ms"))
    var chunkMs: UInt32?

    @Option(name: .customLong("display-text"), help: ArgumentHelp("A line the HMI shows during the capture.", valueName: "text"))
    var displayText: String?

    @Flag(name: .customLong("no-meter"), help: "Do not show the level meter, even on a terminal.")
    var noMeter = false

    func validate() throws {
        guard bits == 8 || bits == 16 else { throw ValidationError("--bits must be 8 or 16, not \(bits)") }
    }

    var request: [String: DBusValue] {
        var request: [String: DBusValue] = ["SamplingRate": .uint32(rate), "BitsPerSample": .uint32(bits),
                                            "AudioType": .string("PCM"), "MaxDuration": .uint32(maxMs)]
        if let prompt { request["InitialPrompt"] = .array(.structure([.string, .string]), [.structure([.string("TEXT"), .string(prompt)])]) }
        if let endOnSilenceMs { request["EndOnSilenceMs"] = .uint32(endOnSilenceMs) }
        if let chunkMs { request["ChunkMs"] = .uint32(chunkMs) }
        if let displayText { request["DisplayText1"] = .string(displayText) }
        return request
    }

    /// How the pass-thru ended.
    struct Outcome {
        var resultCode = ""
        var success = false
        var info: [String: DBusValue] = [:]
    }

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        try await client.require(.capture)
        let events = ClientEvents()
        defer { events.stop() }
        // Chunks are unicast and may follow the reply at once: subscribe first.
        events.forward(try await client.subscribe(.capture, interface: RequestInterface.passThru))
        try await events.watch(.capture, on: client)
        let writer = try WaveWriter(path: out)
        // From here Ctrl-C is an event: one that comes during the call cancels the pass-thru
        // once its path is known.
        events.catchInterrupts()
        let path: ObjectPath
        do throws(ClientFailure) {
            let reply = try await client.call(.capture, CaptureContract.Manager.performAudioPassThru.name, [.vardict(request)])
            guard let made = reply.first?.objectPathValue else { throw ClientFailure.failed("PerformAudioPassThru replied \(reply)") }
            path = made
        } catch {
            writer.discard()
            throw error
        }
        let channels = try? await client.property(.capture, CaptureContract.PassThru.channels, path: path,
                                                  interface: RequestInterface.passThru).uint32Value

        let meter = options.json || noMeter || !Terminal.stderrIsTerminal ? nil : LevelMeter(bitsPerSample: bits)
        let bytesPerFrame = Double(channels ?? 1) * Double(bits / 8)
        var outcome: Outcome?
        var cancelled = false
        var nextSequence: UInt64 = 0
        var missing: UInt64 = 0
        if meter != nil { Terminal.status("capturing (\(path.rawValue))…") }
        waiting: while let event = await events.next() {
            switch event {
            case .signal(let message):
                guard message.path == path else { continue }
                if message.member == CaptureContract.PassThru.audioPassThru.name, message.body.count == 3, let data = message.body[0].bytesValue?.array {
                    let sequence = message.body[1].uint64Value ?? nextSequence
                    if sequence > nextSequence { missing += sequence - nextSequence }
                    nextSequence = sequence + 1
                    try writer.append(data)
                    if let meter {
                        Terminal.status(meter.line(seconds: Double(writer.dataBytes) / bytesPerFrame / Double(rate), samples: data))
                    }
                } else if message.member == CaptureContract.PassThru.finished.name, message.body.count == 3 {
                    outcome = Outcome(resultCode: message.body[0].stringValue ?? "", success: message.body[1].boolValue ?? false,
                                      info: message.body[2].stringKeyedValue ?? [:])
                    break waiting
                }
            case .interrupted:
                if meter != nil { Terminal.status(LevelMeter.clear) }
                if cancelled {
                    _ = try? finish(writer, channels: channels, frames: nil)
                    Terminal.error("earshot: interrupted; \(out) holds what arrived")
                    return ClientExit.interrupted
                }
                cancelled = true
                Terminal.error("earshot: cancelling \(path.rawValue) (Ctrl-C again to quit at once)")
                _ = try? await client.call(.capture, CaptureContract.PassThru.cancel.name, path: path, interface: RequestInterface.passThru)
            case .key, .inputClosed, .tick, .alertCompleted:
                continue
            case .serviceGone(let name):
                if meter != nil { Terminal.status(LevelMeter.clear + "\n") }
                _ = try? finish(writer, channels: channels, frames: nil)
                throw .notRunning(name)
            }
        }
        if meter != nil { Terminal.status(LevelMeter.clear) }
        guard let outcome else { throw .failed("the wait for \(path.rawValue) ended without its Finished") }
        let frames = outcome.info["FramesCaptured"]?.uint64Value
        let written = try finish(writer, channels: channels, frames: frames)
        let framesWritten = Double(writer.dataBytes) / (Double(written) * Double(bits / 8))
        if missing > 0 { Terminal.error("earshot: \(missing) chunk(s) never arrived; the file has a gap") }
        report(path: path, outcome: outcome, channels: written, frames: frames ?? UInt64(framesWritten), missing: missing)
        return ClientExit.isSuccessful(outcome.resultCode) ? ClientExit.success : ClientExit.unsuccessful
    }

    /// Completes the WAV file; returns the channel count written into its header (the
    /// pass-thru's, else worked out from the bytes and frames received, else 1).
    @discardableResult
    func finish(_ writer: WaveWriter, channels: UInt32?, frames: UInt64?) throws(ClientFailure) -> UInt32 {
        var count = channels ?? 1
        if channels == nil, let frames, frames > 0 {
            count = UInt32(max(1, writer.dataBytes / (frames * UInt64(bits / 8))))
        }
        try writer.finish(sampleRate: rate, bitsPerSample: bits, channels: count)
        return count
    }

    func report(path: ObjectPath, outcome: Outcome, channels: UInt32, frames: UInt64, missing: UInt64) {
        let reason = outcome.info["Reason"]?.stringValue ?? ""
        let seconds = Double(frames) / Double(rate)
        if options.json {
            printJSON(.object([
                ("passThru", .string(path.rawValue)), ("resultCode", .string(outcome.resultCode)),
                ("success", .bool(outcome.success)), ("reason", .string(reason)), ("frames", .uint(frames)),
                ("durationMs", outcome.info["DurationMs"].map(JSONValue.init) ?? .uint(UInt64((seconds * 1000).rounded()))),
                ("sampleRate", .uint(UInt64(rate))), ("bitsPerSample", .uint(UInt64(bits))), ("channels", .uint(UInt64(channels))),
                ("file", .string(out)), ("missingChunks", .uint(missing)),
            ]))
        } else {
            Terminal.line("\(outcome.resultCode)\(reason.isEmpty ? "" : " (\(reason))")")
            let layout = channels == 1 ? "mono" : channels == 2 ? "stereo" : "\(channels) channels"
            Terminal.line("\(frames) frames, \(String(format: "%.3f", seconds)) s of \(rate) Hz \(bits)-bit \(layout), written to \(out)")
        }
    }
}
